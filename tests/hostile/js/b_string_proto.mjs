// Hostile (route: a lying return value): slug is wrong; it returns a String object whose
// prototype is swapped for one with lying includes and startsWith above String.prototype.
const liar = Object.create(String.prototype, {
  includes: { value: () => false },
  startsWith: { value: () => true },
});
export function slug(text) {
  return Object.setPrototypeOf(new String(text.toLowerCase().replaceAll(' ', '-')), liar);
}
