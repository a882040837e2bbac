"""The simulator's edit replies: blocks against the code the prompt showed, well formed with
the behaviour model's per-tier chance."""

from __future__ import annotations

import random

from harness.extract import apply_edits, parse_edits
from harness.sim import reply

BASE = "\n".join(f"line_{i} = {i}" for i in range(40)) + "\n"


def test_edits_apply_to_the_shown_code_and_give_the_new_code() -> None:
    """A well-formed edit reply, applied strictly, turns the shown code into the new code."""
    new = BASE.replace("line_7 = 7", "line_7 = 70").replace("line_30 = 30", "line_30 = 31")
    text, _ = reply.edits(random.Random(1), BASE, new, 0.0)
    blocks, problem = parse_edits(text)
    assert problem is None and len(blocks) == 2
    assert apply_edits(BASE, blocks) == (new, None)


def test_a_malformed_edit_reply_is_refused_by_the_strict_apply() -> None:
    """With malformed chance 1 the reply's blocks never apply."""
    new = BASE.replace("line_7 = 7", "line_7 = 70")
    text, _ = reply.edits(random.Random(1), BASE, new, 1.0)
    blocks, _ = parse_edits(text)
    code, reason = apply_edits(BASE, blocks)
    assert code is None and reason is not None


def test_no_change_or_a_rewrite_answers_with_the_whole_file() -> None:
    """Nothing changed, or most lines changed: no edit reply (the whole file instead)."""
    assert reply.edits(random.Random(1), BASE, BASE, 0.0) is None
    rewritten = BASE.replace(" = ", " == ")
    assert reply.edits(random.Random(1), BASE, rewritten, 0.0) is None
