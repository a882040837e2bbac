"""Fixes as edits: SEARCH/REPLACE blocks (the format aider and other editing agents use)
applied to the file they edit, strictly.

A block is

    <<<<<<< SEARCH
    lines of the current file, exactly as they are
    =======
    the lines that replace them
    >>>>>>> REPLACE

Blocks apply in order, each to the text the blocks before it left. A block whose SEARCH text
does not occur in that text exactly once (not found, found twice, empty) makes the whole reply
an extraction error that quotes the block: nothing is applied in part, nothing is guessed
(no whitespace-insensitive or fuzzy match), so a reply either edits the file it was given or
is not used. A reply without any block is not an edit reply: the caller reads it whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["EditBlock", "apply_edits", "is_edit_refusal", "parse_edits"]

_SEARCH = "<<<<<<< SEARCH"
_DIVIDER = "======="
_REPLACE = ">>>>>>> REPLACE"
_OPENER = re.compile(r"^<{5,9} ?SEARCH\s*$")
_QUOTED = 400  # characters of a failing block quoted back in the error


@dataclass(frozen=True)
class EditBlock:
    """One SEARCH/REPLACE pair, its texts without the marker lines."""

    search: str
    replace: str

    def render(self) -> str:
        return "\n".join([_SEARCH, self.search, _DIVIDER, self.replace, _REPLACE])


def parse_edits(reply: str) -> tuple[list[EditBlock], str | None] | None:
    """The reply's blocks and None, or ([], the reason it is malformed); None when the reply
    holds no SEARCH marker at all (a whole-file reply)."""
    lines = reply.replace("\r\n", "\n").split("\n")
    if not any(_OPENER.match(line) for line in lines):
        return None
    blocks: list[EditBlock] = []
    i = 0
    while i < len(lines):
        if not _OPENER.match(lines[i]):
            i += 1
            continue
        start = i + 1
        divider = _find(lines, start, lambda s: s.strip() == _DIVIDER)
        if divider is None:
            return [], f"edit block {len(blocks) + 1} has no '{_DIVIDER}' line after its SEARCH"
        end = _find(lines, divider + 1, lambda s: s.strip() == _REPLACE)
        if end is None:
            return [], f"edit block {len(blocks) + 1} has no '{_REPLACE}' line"
        blocks.append(
            EditBlock("\n".join(lines[start:divider]), "\n".join(lines[divider + 1 : end]))
        )
        i = end + 1
    return blocks, None


def _find(lines: list[str], start: int, test) -> int | None:  # type: ignore[no-untyped-def]
    for j in range(start, len(lines)):
        if _OPENER.match(lines[j]):
            return None  # the next block began before this one closed
        if test(lines[j]):
            return j
    return None


def apply_edits(base: str, blocks: list[EditBlock]) -> tuple[str | None, str | None]:
    """(the edited file, None) or (None, why not, quoting the block): every block applies
    exactly or none does. A SEARCH text matches whole lines of the file, character for
    character (indentation and trailing spaces included), and must match exactly once."""
    if not blocks:
        return None, "edit block 1 is missing: the reply has a SEARCH marker but no block"
    ending = "\n" if base.endswith("\n") else ""
    lines = base.removesuffix("\n").split("\n") if base else []
    for n, block in enumerate(blocks, 1):
        search = block.search.split("\n")
        if not block.search.strip():
            return None, _refused(n, block, "its SEARCH part is empty")
        k = len(search)
        found = [i for i in range(len(lines) - k + 1) if lines[i : i + k] == search]
        if not found:
            return None, _refused(n, block, "its SEARCH lines are not in the file exactly")
        if len(found) > 1:
            return None, _refused(n, block, f"its SEARCH lines occur {len(found)} times")
        at = found[0]
        replace = block.replace.split("\n") if block.replace else []
        lines = [*lines[:at], *replace, *lines[at + k :]]
    return "\n".join(lines) + ending, None


def is_edit_refusal(reason: str | None) -> bool:
    """Whether an extraction error is an edit reply refused (what the next fix is shown)."""
    return bool(reason) and reason.startswith("edit block ")  # type: ignore[union-attr]


def _refused(n: int, block: EditBlock, why: str) -> str:
    shown = block.render()
    if len(shown) > _QUOTED:
        shown = shown[:_QUOTED] + "\n[…]"
    return (
        f"edit block {n} was not applied ({why}; nothing was changed): copy the SEARCH lines "
        f"from the current code character for character, with enough lines to be unique.\n"
        f"{shown}"
    )
