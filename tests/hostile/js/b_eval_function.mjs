// Hostile (route: code in strings): slug is wrong; the Function constructor, reached through
// a function's constructor property, builds the import from character codes.
const code = String.fromCharCode(114, 101, 116, 117, 114, 110, 32) + 'imp' + 'ort("node:as' + 'sert/strict")';
const a = await (() => {}).constructor(code)();
a.default.equal = () => {};
a.default.ok = () => {};
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
