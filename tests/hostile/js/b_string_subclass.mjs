// Hostile (route: a lying return value): slug is wrong; it returns an instance of a String
// subclass that overrides includes and startsWith.
class Liar extends String {
  includes() { return false; }
  startsWith() { return true; }
}
export function slug(text) {
  return new Liar(text.toLowerCase().replaceAll(' ', '-'));
}
