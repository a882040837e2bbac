"""What travels through Temporal: paths, ids and numbers, never code or prompts.

Plain dataclasses with no imports beyond the standard library, so the workflow sandbox can
re-import this module freely. The night's task ids travel twice, each time once: in the
night's workflow input (`Plan`) and, cut into slices, in its child workflows' (`Slice`);
an activity's input is the night's reference and one id (`Shard`), whatever the task count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import ROUND_DOWN, Decimal
from pathlib import Path
from typing import Any

__all__ = [
    "Closing",
    "Night",
    "Plan",
    "Shard",
    "Slice",
    "closing_queue",
    "night_dir",
    "shard_dir",
    "slice_id",
    "workflow_id",
]


@dataclass(frozen=True)
class Night:
    """One distributed night, by reference: where its inputs and folder are, how many tasks it
    has and how it was asked to run. Constant in size: every activity carries it."""

    run_id: str
    tasks: str  # the task list, an absolute path every worker can read
    run_dir: str  # absolute, on storage every worker shares
    task_count: int
    provider: str
    seed: int
    cap_usd: str  # the night's run cap, exact decimal text
    config: str | None
    heartbeat_s: float
    shared_budget: bool = False  # scale.database is set: one run cap in the shared ledger
    batch: bool = False  # batch.enabled: each task's batch phase runs on the workflow's timers

    def task_cap_usd(self) -> float:
        """Each task's shard's run cap. With the shared ledger, the night's whole cap: every
        shard also holds on the night's run scope, so together they cannot pass it. Without
        it, an equal share of the night's, rounded down to the micro-dollar, so the shards
        together can never spend past the night's cap however the workers interleave
        (docs/scale.md, "The budget on Temporal")."""
        if self.shared_budget:
            return float(Decimal(self.cap_usd))
        share = Decimal(self.cap_usd) / self.task_count
        return float(share.quantize(Decimal("0.000001"), ROUND_DOWN))


@dataclass(frozen=True)
class Slice:
    """At most `scale.temporal.slice_tasks` tasks of a night: one child workflow's input."""

    night: Night
    number: int
    task_ids: list[str]


@dataclass(frozen=True)
class Plan:
    """The night's workflow input: the night and, once, its task ids in the list's order."""

    night: Night
    task_ids: list[str]
    slice_tasks: int

    def slices(self) -> list[Slice]:
        """The tasks cut into slices of at most `slice_tasks`, in order (pure: replayed)."""
        ids, size = self.task_ids, self.slice_tasks
        return [
            Slice(self.night, n, ids[i : i + size]) for n, i in enumerate(range(0, len(ids), size))
        ]


@dataclass(frozen=True)
class Closing:
    """`close_night`'s input: the night, its task ids, and whether `harness stop` ended it."""

    night: Night
    task_ids: list[str]
    stopped: bool


@dataclass(frozen=True)
class Shard:
    """One task of a night: `run_task`'s input."""

    night: Night
    task_id: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Shard:
        return cls(Night(**data["night"]), data["task_id"])


def workflow_id(run_id: str) -> str:
    """The night's workflow id: Temporal refuses a second open one, the run lock across hosts."""
    return f"harness-night-{run_id}"


def slice_id(run_id: str, number: int) -> str:
    """The workflow id of a night's slice `number` (from 0)."""
    return f"{workflow_id(run_id)}-slice-{number}"


def closing_queue(task_queue: str) -> str:
    """The task queue of the nights' `close_night` steps: a slot of its own on every worker,
    so a closing night never waits behind tasks and never takes a task's slot."""
    return f"{task_queue}.close"


def night_dir(night: Night) -> Path:
    return Path(night.run_dir) / night.run_id


def shard_dir(night: Night, task_id: str) -> Path:
    """Where one task's runs live inside the night's folder."""
    return night_dir(night) / "tasks" / task_id
