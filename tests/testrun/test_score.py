"""Tests of the record judge: only complete, clean, in-order records settle a test."""

from __future__ import annotations

from typing import Any

from harness.results import Outcome
from harness.testrun.score import judge

NONCE = "n0"
IDS = frozenset({"t.py::a", "t.py::b"})


def stream(*records: tuple[str, dict[str, Any]]) -> list[dict[str, Any] | None]:
    """Records as the recorder writes them: nonce and sequence numbers filled in."""
    return [{"n": NONCE, "s": i, "k": k, **d} for i, (k, d) in enumerate(records)]


def passing(nodeid: str, raw: str = "ok") -> list[tuple[str, dict[str, Any]]]:
    phases = [
        ("phase", {"id": nodeid, "when": w, "outcome": "passed", "raw": raw if w == "call" else ""})
        for w in ("setup", "call", "teardown")
    ]
    return [("start", {"id": nodeid}), *phases, ("finish", {"id": nodeid})]


HEAD = [("hello", {}), ("collected", {"ids": sorted(IDS), "selected": sorted(IDS)})]


def test_clean_records_settle_as_passed() -> None:
    """Setup, call and teardown all passed, with the body seen to return: passed."""
    verdict = judge(stream(*HEAD, *passing("t.py::a"), ("end", {"status": "0"})), NONCE, IDS)

    assert ({k: c.outcome for k, c in verdict.settled.items()}, verdict.tamper) == (
        {"t.py::a": Outcome.PASSED},
        [],
    )


def test_missing_teardown_leaves_the_test_unsettled() -> None:
    """A test whose records stop before teardown is not settled (it becomes an error)."""
    verdict = judge(stream(*HEAD, *passing("t.py::a")[:3]), NONCE, IDS)

    assert (verdict.settled, verdict.in_flight) == ({}, "t.py::a")


def test_passed_report_without_a_clean_body_is_tampering() -> None:
    """A report saying passed while the recorder saw the body raise means a rewritten report."""
    verdict = judge(stream(*HEAD, *passing("t.py::a", raw="raised")), NONCE, IDS)

    assert (verdict.settled, len(verdict.tamper)) == ({}, 1)


def test_duplicate_records_are_tampering() -> None:
    """A second set of records for a settled test marks the run tampered."""
    verdict = judge(stream(*HEAD, *passing("t.py::a"), *passing("t.py::a")), NONCE, IDS)

    assert "settled" in verdict.tamper[0]


def test_unexpected_ids_are_tampering() -> None:
    """Records for a test the pristine collection does not know mark the run tampered."""
    verdict = judge(stream(*HEAD, *passing("t.py::zzz")), NONCE, IDS)

    assert "unexpected" in verdict.tamper[0]


def test_wrong_nonce_or_sequence_is_forgery() -> None:
    """A record with another nonce, a skipped sequence number or garbage is a forgery."""
    records = stream(*HEAD, *passing("t.py::a"))
    wrong_nonce = [*records[:2], {**records[2], "n": "guess"}]
    gap = [*records[:2], records[3]]

    assert [bool(judge(r, NONCE, IDS).tamper) for r in (wrong_nonce, gap, [*records, None])] == [
        True,
        True,
        True,
    ]


def test_records_after_the_end_are_tampering() -> None:
    """Nothing may be recorded after the bootstrap reported the session's end."""
    verdict = judge(stream(*HEAD, ("end", {"status": "0"}), *passing("t.py::a")), NONCE, IDS)

    assert "after the session ended" in verdict.tamper[0]


def test_failed_setup_is_an_error_and_skip_is_skipped() -> None:
    """A setup failure is an ERROR; a skip in setup is SKIPPED, never passed."""
    error = [
        ("phase", {"id": "t.py::a", "when": "setup", "outcome": "failed", "msg": "boom"}),
        ("phase", {"id": "t.py::a", "when": "teardown", "outcome": "passed"}),
        ("finish", {"id": "t.py::a"}),
    ]
    skip = [
        ("phase", {"id": "t.py::b", "when": "setup", "outcome": "skipped"}),
        ("phase", {"id": "t.py::b", "when": "teardown", "outcome": "passed"}),
        ("finish", {"id": "t.py::b"}),
    ]
    verdict = judge(stream(*HEAD, *error, *skip), NONCE, IDS)

    assert {k: c.outcome for k, c in verdict.settled.items()} == {
        "t.py::a": Outcome.ERROR,
        "t.py::b": Outcome.SKIPPED,
    }
