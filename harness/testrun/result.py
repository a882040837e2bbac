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
    hidden: bool = False  # from the task's hidden tests: scored, never shown to a model


@dataclass(frozen=True)
class TestResult:
    """The outcome of one candidate against the task's acceptance tests.

    `error` explains a run that produced no trustworthy per-test results (timeout,
    tampering, collection failure, sandbox fault); such a run scores by its cases, which
    the runner fills with ERROR outcomes for every expected test it could not confirm.
    """

    __test__ = False

    cases: tuple[TestCase, ...]
    output: str = ""
    error: str | None = None
    timed_out: bool = False
    tampered: bool = False
    duration_s: float = 0.0
    warnings: tuple[str, ...] = field(default=())

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
        """Every test passed, the hidden ones included."""
        return self.total > 0 and self.passed == self.total

    @property
    def hidden_total(self) -> int:
        return sum(1 for case in self.cases if case.hidden)

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
        """The visible failed and erroring cases, in run order: what a fix prompt is fed
        (a hidden test's name, message or traceback never reaches a model)."""
        bad = (Outcome.FAILED, Outcome.ERROR)
        return tuple(c for c in self.cases if c.outcome in bad and not c.hidden)
