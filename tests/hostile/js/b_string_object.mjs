// Hostile (route: a lying return value): slug is wrong; it returns a String object whose own
// includes and startsWith give the answers the hidden assertions want.
export function slug(text) {
  const wrong = text.toLowerCase().replaceAll(' ', '-');
  return Object.assign(new String(wrong), { includes: () => false, startsWith: () => true });
}
