"""What travels through Temporal: paths, ids and numbers, never code or prompts.

Plain dataclasses with no imports beyond the standard library, so the workflow sandbox can
re-import this module freely.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import ROUND_DOWN, Decimal
from pathlib import Path
from typing import Any

__all__ = ["Night", "Shard", "night_dir", "shard_dir", "workflow_id"]


@dataclass(frozen=True)
class Night:
    """One distributed night: where its inputs and folder are, and how it was asked to run."""

    run_id: str
    tasks: str  # the task list, an absolute path every worker can read
    run_dir: str  # absolute, on storage every worker shares
    task_ids: list[str]
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
        share = Decimal(self.cap_usd) / len(self.task_ids)
        return float(share.quantize(Decimal("0.000001"), ROUND_DOWN))


@dataclass(frozen=True)
class Shard:
    """One task of a night."""

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


def night_dir(night: Night) -> Path:
    return Path(night.run_dir) / night.run_id


def shard_dir(night: Night, task_id: str) -> Path:
    """Where one task's runs live inside the night's folder."""
    return night_dir(night) / "tasks" / task_id
