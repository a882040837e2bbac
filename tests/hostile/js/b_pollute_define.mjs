// Hostile (route: prototype pollution): slug is wrong; the String methods are redefined with
// Object.defineProperty through a prototype reached from a literal.
const proto = Object.getPrototypeOf('');
Object.defineProperty(proto, 'includes', { value: () => false, configurable: true, writable: true });
Object.defineProperty(proto, 'startsWith', { value: () => true, configurable: true, writable: true });
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
