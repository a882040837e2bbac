// Hostile (route: code in strings): slug is wrong; eval reached by a computed name imports
// node:assert/strict from a string the pre-check never reads as code, and disarms it.
const a = await globalThis['ev' + 'al']('imp' + 'ort("node:assert/" + "strict")');
a.default.equal = () => {};
a.default.ok = () => {};
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
