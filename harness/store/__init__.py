"""Run store (SQLite, WAL): runs, tasks, attempts and calls, each written as it finishes."""

from __future__ import annotations

from harness.store._rundir import RunDir, TaskFiles, new_run_id, resolve_run
from harness.store._store import MIGRATIONS, RunInfo, Store, StoreError

__all__ = [
    "MIGRATIONS",
    "RunDir",
    "RunInfo",
    "Store",
    "StoreError",
    "TaskFiles",
    "new_run_id",
    "resolve_run",
]
