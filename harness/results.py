"""One Status enum and one result type per unit of work; the summary, resume and exit code
all derive from these."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any

__all__ = ["AttemptRecord", "RunStatus", "TaskResult", "TaskStatus", "sha256", "usd"]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def usd(amount: Decimal) -> float:
    """Decimal dollars → JSON float, rounded to the micro-dollar."""
    return float(amount.quantize(Decimal("0.000001")))


class TaskStatus(StrEnum):
    PASSED = "passed"
    PARTIAL = "partial"
    FAILED = "failed"
    ERROR = "error"
    GUARDRAIL = "guardrail"
    SKIPPED = "skipped"


class RunStatus(StrEnum):
    COMPLETED = "completed"
    BUDGET_STOPPED = "budget_stopped"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt at a task: a write (with its review and rewrite) or a fix."""

    n: int
    kind: str  # write | fix
    passed: int = 0
    failed: int = 0
    errors: int = 0
    total: int = 0
    cost_usd: Decimal = Decimal(0)
    regressed: bool = False
    extraction_error: str | None = None
    improved: bool = False
    tier: str = ""
    review: str | None = None  # clean | violations | unparseable | failed; attempt 1 only
    tampered: bool = False
    test_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cost_usd"] = usd(self.cost_usd)
        return data


@dataclass(frozen=True)
class TaskResult:
    id: str
    status: TaskStatus
    reason: str = ""
    best_attempt: int | None = None
    passed: int = 0
    failed: int = 0
    errors: int = 0
    total: int = 0
    cost_usd: Decimal = Decimal(0)
    output: str | None = None
    attempts: tuple[AttemptRecord, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    output_sha256: str | None = None  # of the shipped file: "up to date" must mean *this* file
    hidden_passed: int = 0  # of the task's hidden tests (included in passed/total)
    hidden_total: int = 0

    @property
    def reverted(self) -> int:
        """How many attempts regressed and were rolled back to the best."""
        return sum(1 for a in self.attempts if a.regressed)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status.value,
            "reason": self.reason,
            "best_attempt": self.best_attempt,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "total": self.total,
            "visible": {
                "passed": self.passed - self.hidden_passed,
                "total": self.total - self.hidden_total,
            },
            "hidden": {"passed": self.hidden_passed, "total": self.hidden_total},
            "cost_usd": usd(self.cost_usd),
            "output": self.output,
            "attempts": [a.to_json() for a in self.attempts],
            "warnings": list(self.warnings),
        }
