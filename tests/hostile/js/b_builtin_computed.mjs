// Hostile (route: process.getBuiltinModule): slug is wrong; the method named by a computed
// key, the module by a joined string.
const get = globalThis.process[['getBuiltin', 'Module'].join('')];
const a = get(['assert', 'strict'].join('/'));
for (const k of Object.keys(a)) a[k] = () => {};
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
