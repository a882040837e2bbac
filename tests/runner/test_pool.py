"""Runner pieces that need no pool: the exit-code contract and run notes."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from harness.report import RunSummary
from harness.results import (
    AttemptRecord,
    ReviewOutcome,
    RunStatus,
    StopCause,
    TaskResult,
    TaskStatus,
)
from harness.runner.pool import _review_notes, exit_code

NOW = dt.datetime(2026, 11, 21, 2, 0, tzinfo=dt.UTC)


def night(status: RunStatus, *tasks: TaskResult) -> RunSummary:
    return RunSummary("r", NOW, NOW, status, "sim", None, Decimal(0), tasks)


PASSED = TaskResult("a", TaskStatus.PASSED)
UP_TO_DATE = TaskResult(
    "b",
    TaskStatus.SKIPPED,
    "up to date: passed in run r0 with the same inputs",
    cause=StopCause.UP_TO_DATE,
)
FILTERED = TaskResult("e", TaskStatus.SKIPPED, "filtered", cause=StopCause.FILTERED)
PARTIAL = TaskResult("c", TaskStatus.PARTIAL, "5 attempts used")


@pytest.mark.parametrize(
    ("summary", "code"),
    [
        (night(RunStatus.COMPLETED, PASSED, UP_TO_DATE, FILTERED), 0),
        (night(RunStatus.COMPLETED, PASSED, PARTIAL), 1),
        (
            night(
                RunStatus.COMPLETED,
                TaskResult("d", TaskStatus.SKIPPED, "budget", cause=StopCause.BUDGET),
            ),
            1,
        ),
        (night(RunStatus.BUDGET_STOPPED, PASSED), 3),
        (night(RunStatus.INTERRUPTED, PASSED), 130),
    ],
    ids=["all-passing", "partial", "skipped-not-passing", "budget", "interrupted"],
)
def test_exit_codes_follow_the_contract(summary: RunSummary, code: int) -> None:
    """0 only when every task passes (up to date and filtered count), 3 on budget, 130 when
    interrupted."""
    assert exit_code(summary) == code


def test_unparseable_reviews_are_counted_in_a_run_note() -> None:
    """Fail-open reviews are not silent: the summary says how many there were."""
    attempts = (
        AttemptRecord(1, "write", review=ReviewOutcome.UNPARSEABLE),
        AttemptRecord(2, "fix"),
    )
    results = [TaskResult("a", TaskStatus.PARTIAL, attempts=attempts), PASSED]

    assert _review_notes(results) == (
        "1 review(s) were unparseable and counted as CLEAN (fail open)",
    )
    assert _review_notes([PASSED]) == ()
