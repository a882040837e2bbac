"""Markdown code fences in a model reply: which blocks are in the language asked for."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Collection

__all__ = ["fenced_blocks"]

# Opening fence (``` or ~~~ with an optional info string), lazy body, then the same fence on
# its own line or the end of the reply: a reply cut off at max_tokens has no closing fence.
_FENCE = re.compile(
    r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`]*)[^\n`]*\n"
    r"(?P<body>.*?)(?:^[ \t]{0,3}(?P=fence)[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)


def fenced_blocks(reply: str, fences: Collection[str]) -> list[str] | None:
    """The non-empty blocks fenced as one of `fences` (or with no info string), dedented;
    None when the reply has no fence at all (it may then be bare code)."""
    matches = list(_FENCE.finditer(reply))
    if not matches:
        return None
    wanted = {"", *(f.lower() for f in fences)}
    bodies = (m.group("body") for m in matches if m.group("lang").lower() in wanted)
    return [textwrap.dedent(body) for body in bodies if body.strip()]
