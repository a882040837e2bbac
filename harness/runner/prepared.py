"""Run: what start-up hands the pool, checked once; carry-over and the pool read it."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.budget import Budget
from harness.morning import GitDelivery
from harness.pipeline import TaskEnv
from harness.runner.batch.night import BatchNight
from harness.store import RunDir, Store
from harness.tasks.spec import TaskSpec

__all__ = ["Run"]


@dataclass
class Run:
    """A prepared run: everything was checked at start-up, nothing has been spent."""

    tasks: list[TaskSpec]
    env: TaskEnv
    rundir: RunDir
    budget: Budget
    stop: threading.Event
    provider: str
    concurrency: int
    store: Store
    digests: dict[str, str] = field(default_factory=dict)  # task id → inputs digest
    notes: tuple[str, ...] = ()
    close: Callable[[], None] = lambda: None
    resumed: bool = False
    rerun: bool = False
    after_summary: Callable[[dict[str, Any]], None] = lambda data: None
    filtered: tuple[TaskSpec, ...] = ()  # left out by --only: reported as skipped
    started_at: dt.datetime | None = None  # a resumed run keeps its first start
    deliver: GitDelivery | None = None  # config deliver.git: shipped outputs committed
    task_list: Path | None = None  # the task list file, for the commands the summary suggests
    batch: BatchNight | None = None  # config batch.enabled: attempt 1's writes by batch
