"""URL slugs from titles."""

import re
import unicodedata


def slugify(title: str, max_length: int = 60) -> str:
    """Lower-case ASCII words joined by '-', accents dropped, at most max_length characters
    (cut at a word boundary when possible)."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = "-".join(words)
    if len(slug) <= max_length:
        return slug
    cut = slug[:max_length]
    return cut.rsplit("-", 1)[0] if "-" in cut else cut
