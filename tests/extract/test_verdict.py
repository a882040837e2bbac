"""The judge's verdict is read strictly: one object, a verdict per principle, evidence verbatim."""

from __future__ import annotations

import json

from harness.extract import Verdict, parse_verdict

CODE = (
    "import legacy_sdk\n\ndef charge(order_id):\n    if order_id == 'A-1001':\n        return 42\n"
)


def _reply(*entries: tuple[int, str, str], fence: bool = True) -> str:
    body = json.dumps(
        {"verdicts": [{"principle": n, "verdict": v, "evidence": e} for n, v, e in entries]}
    )
    return f"```json\n{body}\n```" if fence else body


def test_a_fail_with_a_line_of_the_candidate_is_kept() -> None:
    """A fail quoting a candidate line (surrounding spaces aside) is a broken principle."""
    text = _reply((1, "fail", "import legacy_sdk"), (2, "fail", "  if order_id == 'A-1001':"))

    reading = parse_verdict(text, {1, 2}, CODE)

    assert reading == type(reading)(
        (Verdict(1, "import legacy_sdk"), Verdict(2, "if order_id == 'A-1001':")), (), None
    )


def test_a_fail_with_made_up_evidence_is_dropped() -> None:
    """Evidence that is not a line of the candidate drops that verdict, and only that one."""
    text = _reply((1, "fail", "from legacy import client"), (2, "pass", ""), fence=False)

    reading = parse_verdict(text, {1, 2}, CODE)

    assert (reading.broken, reading.dropped, reading.problem) == ((), (1,), None)


def test_empty_evidence_never_matches_a_blank_line() -> None:
    """A fail with empty evidence is dropped even though the candidate has blank lines."""
    reading = parse_verdict(
        _reply(
            (1, "fail", ""),
        ),
        {1},
        CODE,
    )

    assert (reading.broken, reading.dropped) == ((), (1,))


def test_anything_but_one_verdict_object_is_a_problem() -> None:
    """Prose, extra keys, a wrong verdict word, a missing, repeated or unknown principle, a
    number given as text, or an overlong reply: a problem, never a guess."""
    bad = [
        "Principle 1 fails.",
        "",
        None,
        '{"verdicts": [{"principle": 1, "verdict": "pass", "evidence": ""}], "note": "x"}',
        _reply((1, "maybe", "")),
        _reply((1, "pass", "")),
        _reply((1, "pass", ""), (1, "pass", ""), (2, "pass", "")),
        _reply((1, "pass", ""), (3, "pass", "")),
        '{"verdicts": [{"principle": "1", "verdict": "pass", "evidence": ""}, '
        '{"principle": 2, "verdict": "pass", "evidence": ""}]}',
        _reply((1, "pass", ""), (2, "pass", "")) + "\nAnd another thing.",
        _reply((1, "pass", "x" * 70_000), (2, "pass", "")),
    ]

    problems = [parse_verdict(text, {1, 2}, CODE).problem for text in bad]

    assert [p is not None for p in problems] == [True] * len(bad)


def test_all_pass_is_an_approval() -> None:
    """Every principle passed: nothing broken, nothing dropped, no problem."""
    reading = parse_verdict(_reply((1, "pass", ""), (2, "pass", "")), [1, 2], CODE)

    assert (reading.broken, reading.dropped, reading.problem) == ((), (), None)
