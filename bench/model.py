"""The values every bench stage produces: one task's outcome, one night's outcomes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Night", "TaskOutcome", "Tokens"]


@dataclass(frozen=True)
class Tokens:
    """Token usage as billed: fresh input, cache writes, cache reads, output."""

    fresh: int = 0
    cache_write: int = 0
    cache_read: int = 0
    output: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.fresh + other.fresh,
            self.cache_write + other.cache_write,
            self.cache_read + other.cache_read,
            self.output + other.output,
        )


@dataclass(frozen=True)
class Call:
    """One paid call as the vendor would bill it at the list price, with prompt caching as
    the night ran it: which step and model, and its tokens. bench/billing.py prices a task's
    calls again under other billing (no caching, batch rounds)."""

    step: str
    model: str
    fresh: int
    cache_write: int
    cache_read: int
    output: int


@dataclass(frozen=True)
class TaskOutcome:
    """One task of one night, measured the same way for every variant."""

    id: str
    total: int  # tests of the task (0 when nothing was ever scored)
    best_passed: int  # the best attempt's pass count
    shipped_passed: int  # what the shipped file passes
    cost_usd: float
    attempts: int
    calls: int
    provider_s: float  # wall time inside provider.complete (sim CPU + simulated latency)
    latency_s: float  # simulated latency alone (what a real API would take, scaled)
    test_s: float  # wall time of the test runs
    test_runs: int
    tokens: Tokens = field(default_factory=Tokens)
    status: str = ""  # the harness's task status (passed, partial, error, ...); "" for the baseline
    batch_saving_usd: float = 0.0  # what batch mode would save on its attempt-1 write
    bill: tuple[Call, ...] = ()  # every paid call in order (not written to the record)

    @property
    def passing(self) -> bool:
        """The shipped code passes every test."""
        return self.total > 0 and self.shipped_passed == self.total

    @property
    def shipped_worse(self) -> bool:
        """Shipped code passes fewer tests than the task's best attempt did."""
        return self.shipped_passed < self.best_passed


@dataclass(frozen=True)
class Night:
    """One run of one variant over a task list."""

    variant: str  # harness | baseline | baseline_no_ratchet | ...
    seed: int
    concurrency: int
    latency_scale: float | None  # None: zero latency
    wall_s: float
    spent_usd: float
    cap_usd: float | None
    tasks: tuple[TaskOutcome, ...]
    stopped: bool = False  # a budget cap stopped the night

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tasks"] = [{k: v for k, v in asdict(t).items() if k != "bill"} for t in self.tasks]
        return data
