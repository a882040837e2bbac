// Hostile (route: process.getBuiltinModule): slug is wrong; no import at all, the assertion
// module taken from the process object and disarmed.
const a = globalThis.process.getBuiltinModule('node:assert/strict');
a.equal = () => {};
a.ok = () => {};
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
