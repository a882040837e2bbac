// Hostile (route: prototype pollution): slug is wrong; String.prototype.includes and
// startsWith are replaced for the whole process (node's own code keeps private copies; the
// tests' code does not).
String.prototype.includes = function () { return false; };
String.prototype.startsWith = function () { return true; };
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
