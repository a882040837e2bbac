// Hostile (route: a data: URL module): slug is wrong; a percent-encoded data: URL, loaded by
// a dynamic import of a literal, disarms node:assert/strict before the tests run.
await import('data:text/javascript,import%20a%20from%20%22node%3Aassert%2Fstrict%22%3B%20a.equal%20%3D%20a.ok%20%3D%20()%20%3D%3E%20%7B%7D%3B');
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
