"""SEARCH/REPLACE fixes: applied exactly and whole, or refused with the block quoted."""

from __future__ import annotations

from harness.extract import apply_edits, is_edit_refusal, parse_edits

BASE = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


def _reply(*blocks: tuple[str, str]) -> str:
    parts = [f"<<<<<<< SEARCH\n{s}\n=======\n{r}\n>>>>>>> REPLACE" for s, r in blocks]
    return "Here is the fix:\n\n" + "\n\n".join(parts) + "\n\nDone."


def test_a_matching_block_edits_only_its_lines() -> None:
    """A block whose SEARCH lines occur once is replaced; the rest of the file is untouched."""
    blocks, problem = parse_edits(
        _reply(("def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b"))
    )
    assert problem is None
    code, reason = apply_edits(BASE, blocks)
    assert reason is None
    assert code == BASE.replace("return a - b", "return a + b", 1)


def test_a_reply_without_markers_is_not_an_edit_reply() -> None:
    """A whole-file reply has no blocks: the caller reads it whole."""
    assert parse_edits("```python\nx = 1\n```") is None


def test_one_block_off_by_indentation_applies_nothing() -> None:
    """A block whose SEARCH text differs by one space refuses the whole reply, quoting it."""
    good = ("def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b")
    bad = ("def sub(a, b):\n     return a - b", "def sub(a, b):\n    return b - a")
    blocks, _ = parse_edits(_reply(good, bad))
    code, reason = apply_edits(BASE, blocks)
    assert code is None
    assert reason is not None and is_edit_refusal(reason)
    assert "edit block 2" in reason and "     return a - b" in reason


def test_an_ambiguous_block_is_refused() -> None:
    """SEARCH lines that occur twice are refused rather than applied to a guessed place."""
    blocks, _ = parse_edits(_reply(("    return a - b", "    return 0")))
    code, reason = apply_edits(BASE, blocks)
    assert code is None and "occur 2 times" in (reason or "")


def test_a_substring_of_a_line_does_not_match() -> None:
    """Matching is by whole lines: a SEARCH line that is part of a file line does not match."""
    blocks, _ = parse_edits(_reply(("   return a - b", "   return 0")))
    code, reason = apply_edits("def f(a, b):\n    return a - b\n", blocks)
    assert code is None and "not in the file exactly" in (reason or "")


def test_an_unclosed_block_is_malformed() -> None:
    """A block without its REPLACE marker is an error, not a partial edit."""
    parsed = parse_edits("<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n")
    assert parsed is not None
    blocks, problem = parsed
    assert blocks == [] and problem is not None and is_edit_refusal(problem)
