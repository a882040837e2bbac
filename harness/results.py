"""One Status enum and one result type per unit of work; the summary, resume and exit code
all derive from these."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Any

__all__ = [
    "CUT_SHORT",
    "NEEDS_A_HUMAN",
    "AttemptRecord",
    "BatchReport",
    "Difference",
    "Differential",
    "JudgeOutcome",
    "Outcome",
    "ReviewOutcome",
    "RunStatus",
    "Seed",
    "SeedSource",
    "StopCause",
    "TaskBatch",
    "TaskResult",
    "TaskStatus",
    "TestCase",
    "TestResult",
    "Totals",
    "money",
    "safe_text",
    "sha256",
    "usd",
]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Characters that break a store, an event line, a terminal or a prompt: lone surrogates (no
# UTF-8 encoding), NUL and the other C0 controls but tab and newlines, DEL.
_UNSAFE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
# How much of each kind of candidate-controlled text is kept (characters).
ID_CHARS = 1_000
LINE_CHARS = 8_000
TEXT_CHARS = 64_000
OUTPUT_CHARS = 1_000_000
_MARK_CHARS = 60  # room for the "[... N characters dropped]" line


_ESCAPES = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, *range(0xD800, 0xE000)]
}


def _escaped(text: str) -> str:
    return text.translate(_ESCAPES) if _UNSAFE.search(text) else text


def safe_text(text: str, limit: int) -> str:
    """Candidate-controlled text made safe to store, log, show and prompt with: unencodable
    and control characters written as escapes (`\\ud800`, `\\x00`), and at most `limit`
    characters (head and tail kept, the middle dropped and counted). Idempotent."""
    unseen = 0
    if len(text) > 2 * limit:  # escaping never shortens text: only its two ends can be kept
        unseen = len(text) - 2 * limit
        text = text[:limit] + text[-limit:]
    text = _escaped(text)
    if len(text) <= limit:
        return text
    keep = (limit - _MARK_CHARS) // 2
    dropped = len(text) - 2 * keep + unseen
    return f"{text[:keep]}\n[... {dropped} characters dropped]\n{text[-keep:]}"


def safe_id(text: str) -> str:
    """A test id made safe like any text; a long one keeps its head (the file, the test) and a
    digest of the whole, so two long ids never become one."""
    text = _escaped(text)
    if len(text) <= ID_CHARS:
        return text
    return f"{text[: ID_CHARS - 20]}…#{sha256(text)[:16]}"


def _make_safe(value: object, limits: Mapping[str, int]) -> None:
    """Rewrite a frozen dataclass's text fields in place (construction time only)."""
    for name, limit in limits.items():
        current = getattr(value, name)
        if isinstance(current, str):
            object.__setattr__(value, name, safe_text(current, limit))
        elif isinstance(current, tuple):
            texts = tuple(safe_text(t, limit) if isinstance(t, str) else t for t in current)
            object.__setattr__(value, name, texts)


def usd(amount: Decimal) -> float:
    """Decimal dollars → JSON float, rounded to the micro-dollar as money() rounds (half up)."""
    return float(Decimal(amount).quantize(Decimal("0.000001"), ROUND_HALF_UP))


def money(amount: Decimal | float | int) -> str:
    """Dollars for a person: every digit down to the micro-dollar that is not a trailing zero,
    and at least cents ($0.0555 stays $0.0555, never $0.06; $30 is $30.00)."""
    exact = Decimal(str(amount)).quantize(Decimal("0.000001"), ROUND_HALF_UP)
    text = f"{exact:f}".rstrip("0")
    whole, _, cents = text.partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"


class TaskStatus(StrEnum):
    PASSED = "passed"
    PARTIAL = "partial"
    FAILED = "failed"
    ERROR = "error"
    GUARDRAIL = "guardrail"
    SKIPPED = "skipped"


class StopCause(StrEnum):
    """Why a task ended before it was done, or never ran: what resume and the exit code decide
    on. The task's `reason` says the same for a person, in free text."""

    BUDGET = "budget"  # a budget cap refused a call
    RUN_STOPPED = "run_stopped"  # a signal (SIGINT, SIGTERM)
    HALTED = "halted"  # a provider refused the key, or the account cannot pay
    CONTEXT_TOO_LONG = "context_too_long"  # the prompt does not fit the model: never resent
    HIDDEN_ONLY = "hidden_only"  # every visible test passes, a hidden one fails: nothing to fix
    UP_TO_DATE = "up_to_date"  # passed before on the same inputs, and that file is in place
    FILTERED = "filtered"  # left out by --only


# Causes that cut a task short (it did not end on its own): a resume runs such a task again,
# and the summary lists each one under "Needs a human".
CUT_SHORT = (StopCause.BUDGET, StopCause.RUN_STOPPED, StopCause.HALTED)
# Causes the summary lists under "Needs a human": every stop a person has to act on.
NEEDS_A_HUMAN = (*CUT_SHORT, StopCause.CONTEXT_TOO_LONG, StopCause.HIDDEN_ONLY)


class ReviewOutcome(StrEnum):
    """What the review step of attempt 1 came to."""

    CLEAN = "clean"
    VIOLATIONS = "violations"  # the draft was rewritten
    UNPARSEABLE = "unparseable"  # neither CLEAN nor a list: counted as clean (fail open)
    FAILED = "failed"  # no review could be had; the draft was tested as it was


class JudgeOutcome(StrEnum):
    """What the principle judge (`loop.judge`) came to on a task. It never changes a status,
    a best attempt or the shipped file: a flag is a note for a person, nothing more."""

    APPROVE = "approve"  # judged: no principle found broken
    FLAG = "flag"  # judged: a principle broken, with a line of the candidate as evidence
    SKIPPED = "skipped"  # not judged: the gate stayed shut, or the budget or a stop refused it
    ERROR = "error"  # the judge call failed (a provider fault): fails open
    PARSE_ERROR = "parse_error"  # the reply was not a verdict the harness could read: fails open


class RunStatus(StrEnum):
    COMPLETED = "completed"
    BUDGET_STOPPED = "budget_stopped"
    HALTED = "halted"  # refused credentials, billing or a spend limit: nothing more was sent
    INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class Difference:
    """One call on which the candidate and the reference disagreed, as a focused case:
    the call as Python text, and what each returned or raised."""

    call: str
    reference: str
    candidate: str
    source: str = "observed"  # observed (a call the tests made) | generated (hypothesis)

    def __post_init__(self) -> None:
        _make_safe(self, {"call": LINE_CHARS, "reference": LINE_CHARS, "candidate": LINE_CHARS})

    def text(self) -> str:
        """The line a fix prompt and a human read."""
        return f"`{self.call}`: the reference {self.reference}, yours {self.candidate}"


@dataclass(frozen=True)
class Differential:
    """The candidate checked call by call against the task's reference (testrun/differential):
    calls that agreed, differed, and were left out (each reason in `notes`); `off` says why
    no check ran at all (the reference could not be imported, ...)."""

    agreed: int = 0
    differed: int = 0
    skipped: int = 0
    differences: tuple[Difference, ...] = ()
    notes: tuple[str, ...] = ()
    off: str | None = None
    required: bool = False  # `differential.required`: the task passes only if it agrees

    def __post_init__(self) -> None:
        _make_safe(self, {"off": LINE_CHARS, "notes": LINE_CHARS})

    @property
    def agrees(self) -> bool:
        """Checked, and no call differed."""
        return self.off is None and self.differed == 0

    def summary(self) -> str:
        """One line for a person: the counts and the first difference."""
        if self.off is not None:
            return f"differential check off: {self.off}"
        line = f"{self.differed} call(s) differ from the reference ({self.agreed} agreed"
        line += f", {self.skipped} left out)"
        return f"{line}; first: {self.differences[0].text()}" if self.differences else line

    def to_json(self) -> dict[str, Any]:
        return {
            "agreed": self.agreed,
            "differed": self.differed,
            "skipped": self.skipped,
            "differences": [d.text() for d in self.differences],
            "notes": list(self.notes),
            "off": self.off,
            "required": self.required,
        }


@dataclass(frozen=True, kw_only=True)
class Counts:
    """The five test counters, named as summary.json names them: passed + failed + errors ==
    total, and `skipped` (tests the suite itself skips, whatever the candidate) is not in
    `total`. Records that report a test run (an attempt, a seed, a task) extend it, so the
    counters are declared once and copied as one value (`Counts.of(result)`)."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    total: int = 0
    skipped: int = 0

    @classmethod
    def of(cls, result: TestResult | None) -> Counts:
        """A test run's counters (all zero for no run)."""
        if result is None:
            return cls()
        return cls(
            passed=result.passed,
            failed=result.failed,
            errors=result.errors,
            total=result.total,
            skipped=result.skipped,
        )

    def fields(self) -> dict[str, int]:
        """The counters as keyword arguments, to build a record that extends Counts."""
        return {f: getattr(self, f) for f in _COUNTERS}


_COUNTERS = ("passed", "failed", "errors", "total", "skipped")
# summary.json's key order (a contract read by people and diffs, not only by parsers).
_ATTEMPT_KEYS = (
    *("n", "kind", "passed", "failed", "errors", "total", "cost_usd", "regressed"),
    *("extraction_error", "improved", "tier", "review", "tampered", "test_error", "skipped"),
    "fallbacks",
    "uncarried",
)
_SEED_KEYS = ("source", "run_id", *_COUNTERS)


@dataclass(frozen=True)
class AttemptRecord(Counts):
    """One attempt at a task: a write (with its review and rewrite) or a fix."""

    n: int
    kind: str  # write | fix
    cost_usd: Decimal = Decimal(0)
    regressed: bool = False
    extraction_error: str | None = None
    improved: bool = False
    tier: str = ""
    review: ReviewOutcome | None = None  # attempt 1 only
    tampered: bool = False
    test_error: str | None = None
    # Steps the budget sent to a cheaper tier than they asked for ("fix: frontier → mid").
    fallbacks: tuple[str, ...] = ()
    uncarried: int = 0  # tests the value boundary could not carry a value of
    differential: Differential | None = None  # the port checked against its reference

    def __post_init__(self) -> None:
        _make_safe(self, {"extraction_error": TEXT_CHARS, "test_error": TEXT_CHARS})

    def to_json(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in _ATTEMPT_KEYS}
        data["cost_usd"] = usd(self.cost_usd)
        data["review"] = self.review.value if self.review is not None else None
        data["fallbacks"] = list(self.fallbacks)
        if self.differential is not None:  # only where a check ran or was meant to
            data["differential"] = self.differential.to_json()
        return data


class SeedSource(StrEnum):
    """Where a task's starting candidate came from, when it did not start from nothing."""

    OUTPUT = "output"  # the file already at the task's output path (no run of ours wrote it)
    EARLIER_RUN = "earlier_run"  # an earlier night's best


@dataclass(frozen=True)
class Seed(Counts):
    """A candidate from before this run, re-tested at its start (no paid call): what the
    ratchet started from. Its scores are this run's re-test, not the earlier ones."""

    source: SeedSource
    run_id: str | None = None  # the earlier night, for EARLIER_RUN

    def to_json(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in _SEED_KEYS}
        data["source"] = self.source.value
        return data


@dataclass(frozen=True)
class TaskResult(Counts):
    id: str
    status: TaskStatus
    reason: str = ""
    best_attempt: int | None = None
    cost_usd: Decimal = Decimal(0)
    output: str | None = None
    attempts: tuple[AttemptRecord, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    output_sha256: str | None = None  # of the shipped file: "up to date" must mean *this* file
    cause: StopCause | None = None  # set when the task stopped early or did not run
    seed: Seed | None = None  # the candidate it started from; best_attempt 0 means this one
    hidden_passed: int = 0  # of the task's hidden tests (included in passed/total)
    hidden_total: int = 0
    judge: JudgeOutcome | None = None  # None: the judge is off (loop.judge.enabled false)
    differential: Differential | None = None  # the best candidate against its reference

    def __post_init__(self) -> None:
        _make_safe(self, {"reason": TEXT_CHARS, "warnings": LINE_CHARS})

    def to_json(self) -> dict[str, Any]:
        judged = {"judge": self.judge.value} if self.judge is not None else {}  # only when on
        if self.differential is not None:  # only where the check applies
            judged["differential"] = self.differential.to_json()
        return {
            "id": self.id,
            "status": self.status.value,
            "reason": self.reason,
            "cause": self.cause.value if self.cause is not None else None,
            "best_attempt": self.best_attempt,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "total": self.total,
            "skipped": self.skipped,
            "visible": {
                "passed": self.passed - self.hidden_passed,
                "total": self.total - self.hidden_total,
            },
            "hidden": {"passed": self.hidden_passed, "total": self.hidden_total},
            "cost_usd": usd(self.cost_usd),
            "output": self.output,
            "seed": self.seed.to_json() if self.seed is not None else None,
            "attempts": [a.to_json() for a in self.attempts],
            "warnings": list(self.warnings),
            **judged,
        }


@dataclass(frozen=True)
class Totals:
    """Counts over every run a store has seen (the *_total metrics); `runs` is keyed by run
    status ("unfinished" for a killed run)."""

    runs: Mapping[str, int] = field(default_factory=dict)
    calls: int | None = None  # None: unknown (no store) -> the series is left out, not faked
    retries: int | None = None
    extraction_failures: int = 0
    reverts: int = 0
    judge: Mapping[str, int] = field(default_factory=dict)  # judge outcome → tasks


@dataclass(frozen=True)
class TaskBatch:
    """How a task's first write went by batch: the entry's outcome as the vendor put it
    (succeeded, errored, canceled, expired; pending while unknown) and the batch's latency."""

    outcome: str
    latency_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        latency = None if self.latency_s is None else round(self.latency_s, 3)
        return {
            "by_batch": self.outcome == "succeeded",
            "outcome": self.outcome,
            "latency_s": latency,
        }


@dataclass(frozen=True)
class BatchReport:
    """The night's batch mode: entry counts, what the batched writes cost and would have cost
    at the list price (exact), and each batched task's entry."""

    submitted: int = 0
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    canceled: int = 0
    fell_back: int = 0  # entries that did not succeed: their writes ran interactively
    list_usd: Decimal = Decimal(0)
    cost_usd: Decimal = Decimal(0)
    tasks: Mapping[str, TaskBatch] = field(default_factory=dict)

    @property
    def saved_usd(self) -> Decimal:
        return self.list_usd - self.cost_usd

    def to_json(self) -> dict[str, Any]:
        counts = ("submitted", "succeeded", "errored", "expired", "canceled", "fell_back")
        return {
            **{k: getattr(self, k) for k in counts},
            "list_usd": usd(self.list_usd),
            "cost_usd": usd(self.cost_usd),
            "saved_usd": usd(self.saved_usd),
            "saved_usd_exact": str(self.saved_usd),
        }


# What one acceptance-test run of one candidate produced.


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
    # The value boundary could not carry a value of the test's (a cycle, nested too deep):
    # scored as failed, never fed to a model as the candidate's bug, listed for a human.
    uncarried: bool = False

    def __post_init__(self) -> None:
        # The one door candidate text comes in by: whatever a test printed, raised or was
        # named is safe for the store, the events, the summaries and the prompts from here on.
        object.__setattr__(self, "nodeid", safe_id(self.nodeid))
        _make_safe(self, {"message": LINE_CHARS, "details": TEXT_CHARS})

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
    `in_process`: a Python or JavaScript candidate ran inside the test process
    (`isolation: in_process`, or no bubblewrap for the boundary): the verdict is
    detection-guarded, not isolated.

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
    in_process: bool = False
    differential: Differential | None = None  # calls checked against the reference

    def __post_init__(self) -> None:
        _make_safe(self, {"output": OUTPUT_CHARS, "error": TEXT_CHARS, "warnings": LINE_CHARS})

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
            c
            for c in self.cases
            if c.counts and c.outcome is not Outcome.PASSED and not c.hidden and not c.uncarried
        )

    def uncarried(self) -> tuple[TestCase, ...]:
        """The cases the value boundary could not carry a value of (not the candidate's)."""
        return tuple(c for c in self.cases if c.uncarried and c.outcome is not Outcome.PASSED)
