"""Parse a cheap model's review: CLEAN, a list of violations, or (fail open) unparseable."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Review", "parse_review"]

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$")


@dataclass(frozen=True)
class Review:
    """`violations` empty means clean; `parsed` False means the reply was neither form."""

    violations: tuple[str, ...] = ()
    parsed: bool = True

    @property
    def clean(self) -> bool:
        return not self.violations


def parse_review(text: str | None) -> Review:
    """CLEAN → clean; bullet lines → violations; anything else → clean but unparsed (fail open).

    Failing open is deliberate: the review is cheap insurance on attempt 1, and a garbled
    review must not block a write that the tests will judge anyway.
    """
    stripped = (text or "").strip().strip("`").strip()
    if re.fullmatch(r"\**CLEAN\**\.?", stripped, flags=re.IGNORECASE):
        return Review()
    lines = [line for line in stripped.splitlines() if line.strip()]
    bullets = [m.group(1) for m in map(_BULLET.match, lines) if m]
    if bullets and len(bullets) * 2 >= len(lines):
        return Review(tuple(bullets))
    return Review(parsed=False)
