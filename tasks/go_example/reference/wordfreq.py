"""Word frequencies of a text, most frequent first."""

import re
from collections import Counter


def top_words(text: str, n: int) -> list[tuple[str, int]]:
    """The n most frequent words (lower-cased, letters and apostrophes), ties alphabetical."""
    if n <= 0:
        return []
    words = re.findall(r"[a-z']+", text.lower())
    counts = Counter(w.strip("'") for w in words if w.strip("'"))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:n]
