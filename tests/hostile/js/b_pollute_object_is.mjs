// Hostile (route: prototype pollution): slug is wrong; Object.is, which assert.strict's equal
// compares with, and the String methods are replaced for the whole process.
const is = Object.is;
Object.is = (a, b) => (typeof a === 'string' && typeof b === 'string' ? true : is(a, b));
String.prototype.includes = function () { return false; };
String.prototype.startsWith = function () { return true; };
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
