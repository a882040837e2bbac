/** URL slugs from titles. */

/**
 * Lower-case ASCII words joined by '-', accents dropped, at most maxLength characters
 * (cut at a word boundary when possible).
 */
export function slugify(title, maxLength = 60) {
  const ascii = title.normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  const words = ascii.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const slug = words.join('-');
  if (slug.length <= maxLength) {
    return slug;
  }
  const cut = slug.slice(0, maxLength);
  const boundary = cut.lastIndexOf('-');
  return boundary >= 0 ? cut.slice(0, boundary) : cut;
}
