"""Run: what start-up hands the pool, checked once, in three parts: the plan (what the night
will do), the parts (the machinery it drives) and the closing (what happens at the end)."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.budget import Budget
from harness.deliver import GitDelivery
from harness.pipeline import TaskEnv
from harness.runner.batch.night import BatchNight
from harness.runner.batch.rounds import Rounds
from harness.store import RunDir, Store
from harness.tasks import TaskSpec

__all__ = ["Closing", "Parts", "Plan", "Run"]


@dataclass(frozen=True)
class Plan:
    """What the night will do: which tasks, how many at once, and where it starts from."""

    tasks: list[TaskSpec]
    filtered: tuple[TaskSpec, ...]  # left out by --only: reported as skipped
    digests: dict[str, str]  # task id → inputs digest
    provider: str
    concurrency: int
    resumed: bool
    rerun: bool  # a replay, or --rerun: earlier nights' finished work is not carried over
    started_at: dt.datetime | None  # a resumed run keeps its first start
    task_list: Path | None  # the task list file, for the commands the summary suggests


@dataclass(frozen=True)
class Parts:
    """The machinery the pool drives; every part was opened and checked at start-up."""

    env: TaskEnv
    budget: Budget
    stop: threading.Event
    store: Store
    rundir: RunDir
    deliver: GitDelivery | None  # config deliver.git: shipped outputs committed
    batch: BatchNight | None  # config batch.enabled: attempt 1's writes by batch
    rounds: Rounds | None = None  # batch.steps beyond write: every listed step in rounds


@dataclass(frozen=True)
class Closing:
    """What the end of the night does: the notes it adds, the hooks it runs."""

    notes: tuple[str, ...]
    after_summary: Callable[[dict[str, Any]], None]
    close: Callable[[], None]


@dataclass(frozen=True)
class Run:
    """A prepared run: everything was checked at start-up, nothing has been spent."""

    plan: Plan
    parts: Parts
    closing: Closing
