"""RunArgs: what `harness run` was asked to do, frozen once parsed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunArgs"]


@dataclass(frozen=True)
class RunArgs:
    """The command line of one `harness run`; start-up derives new values, never mutates."""

    tasks: Path
    provider: str = "live"  # live | sim | replay
    budget_usd: float | None = None
    run_dir: Path = Path("runs")
    concurrency: int | None = None
    only: tuple[str, ...] | None = None
    resume: str | None = None  # a run id, "latest", or None for a new run
    rerun: bool = False
    config: Path | None = None
    policy: Path | None = None
    seed: int = 0
    log_level: str = "info"
    replay_from: str | None = None  # --provider replay: the recorded run (folder or id)
    replay_loose: bool = False  # serve a recorded reply when only the prompt differs
    # With scale.database: the run scope whose cap this run's holds share (a Temporal night's
    # id, so every shard of the night spends against one cap); None: the run's own id.
    budget_scope: str | None = None
    # A Temporal night's batch step (harness/scale/batchsteps.py): the workflow's time, unix
    # seconds, as the batch phase's clock; None: the wall clock.
    clock_at: float | None = None
