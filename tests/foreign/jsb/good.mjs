// The honest candidate: lower case, words joined by one dash.
export function slug(text) {
  return text.toLowerCase().trim().split(/\s+/).join('-');
}
