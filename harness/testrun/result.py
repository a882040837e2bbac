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
    """One test's outcome; `message` is the assertion line, `details` the filtered traceback."""

    __test__ = False  # not a pytest class, despite the name

    nodeid: str
    outcome: Outcome
    message: str = ""
    details: str = ""


@dataclass(frozen=True)
class TestResult:
    """The outcome of one candidate against the task's acceptance tests.

    `error` explains a run that produced no trustworthy per-test results (timeout,
    tampering, collection failure, sandbox fault); such a run scores by its cases, which
    the runner fills with ERROR outcomes for every expected test it could not confirm.
    `rejected`: the sandbox's pre-check refused the candidate, so no test ran at all.
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
        return len(self.cases)

    @property
    def passed(self) -> int:
        return 0 if self.tampered else self._count(Outcome.PASSED)

    @property
    def failed(self) -> int:
        return self._count(Outcome.FAILED)

    @property
    def errors(self) -> int:
        return self._count(Outcome.ERROR)

    @property
    def skipped(self) -> int:
        return self._count(Outcome.SKIPPED)

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def failing(self) -> tuple[TestCase, ...]:
        """The failed and erroring cases, in run order: what a fix prompt is fed."""
        return tuple(c for c in self.cases if c.outcome in (Outcome.FAILED, Outcome.ERROR))
