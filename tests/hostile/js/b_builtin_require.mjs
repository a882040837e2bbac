// Hostile (route: process.getBuiltinModule): slug is wrong; the module system itself taken
// from the process, a require made from it, and assert disarmed through that require.
const { createRequire } = globalThis.process.getBuiltinModule('module');
const a = createRequire(import.meta.url)('assert');
a.strict.equal = () => {};
a.strict.ok = () => {};
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
