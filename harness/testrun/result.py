"""TestResult: what one acceptance-test run of one candidate produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Outcome", "TestCase", "TestResult"]


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class TestCase:
    """One test's outcome; `message` is the assertion line, `details` the filtered traceback.

    `by_suite`: a SKIPPED test that the suite skips whatever the candidate (it is skipped
    against the stub candidate too: a skip marker, a conftest option such as `--runslow`).
    """

    __test__ = False  # not a pytest class, despite the name

    nodeid: str
    outcome: Outcome
    message: str = ""
    details: str = ""
    hidden: bool = False  # from the task's hidden tests: scored, never shown to a model
    by_suite: bool = False

    @property
    def counts(self) -> bool:
        """Whether the test is scored: everything but the suite's own skips."""
        return not (self.outcome is Outcome.SKIPPED and self.by_suite)


@dataclass(frozen=True)
class TestResult:
    """The outcome of one candidate against the task's acceptance tests.

    `error` explains a run that produced no trustworthy per-test results (timeout,
    tampering, collection failure, sandbox fault); such a run scores by its cases, which
    the runner fills with ERROR outcomes for every expected test it could not confirm.
    `rejected`: the sandbox's pre-check refused the candidate, so no test ran at all.

    Counting: a test the suite itself skips is `skipped` and left out of `total`, as plain
    pytest leaves it out of a pass; a skip only this candidate causes counts as `failed`.
    So passed + failed + errors == total, and total + skipped == len(cases).
    """

    __test__ = False

    cases: tuple[TestCase, ...]
    output: str = ""
    error: str | None = None
    timed_out: bool = False
    tampered: bool = False
    duration_s: float = 0.0
    warnings: tuple[str, ...] = field(default=())
    rejected: bool = False

    def _count(self, outcome: Outcome) -> int:
        return sum(1 for case in self.cases if case.outcome is outcome)

    @property
    def total(self) -> int:
        return sum(1 for case in self.cases if case.counts)

    @property
    def passed(self) -> int:
        return 0 if self.tampered else self._count(Outcome.PASSED)

    @property
    def failed(self) -> int:
        return self._count(Outcome.FAILED) + sum(
            1 for case in self.cases if case.outcome is Outcome.SKIPPED and case.counts
        )

    @property
    def errors(self) -> int:
        return self._count(Outcome.ERROR)

    @property
    def skipped(self) -> int:
        """The suite's own skips (not in `total`)."""
        return len(self.cases) - self.total

    @property
    def all_passed(self) -> bool:
        """Every test passed, the hidden ones included."""
        return self.total > 0 and self.passed == self.total

    @property
    def hidden_total(self) -> int:
        return sum(1 for case in self.cases if case.hidden and case.counts)

    @property
    def hidden_passed(self) -> int:
        hidden = (c for c in self.cases if c.hidden and c.outcome is Outcome.PASSED)
        return 0 if self.tampered else sum(1 for _ in hidden)

    @property
    def visible_total(self) -> int:
        return self.total - self.hidden_total

    @property
    def visible_passed(self) -> int:
        return self.passed - self.hidden_passed

    def failing(self) -> tuple[TestCase, ...]:
        """The visible cases that count against the candidate (failed, erroring, or skipped by
        its doing), in run order: what a fix prompt is fed (a hidden test's name, message or
        traceback never reaches a model)."""
        return tuple(
            c for c in self.cases if c.counts and c.outcome is not Outcome.PASSED and not c.hidden
        )
