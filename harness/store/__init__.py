"""Run store (SQLite, WAL) and the run directory: runs, tasks, attempts and calls, each
written as it finishes; every candidate, prompt and reply as a file."""

from __future__ import annotations

from harness.store.batches import BatchEntryRow, BatchLog, RecordedBatch
from harness.store.callfiles import RecordingError, read_call, read_calls
from harness.store.db import StoreError
from harness.store.rundir import RunDir, TaskFiles, new_run_id, resolve_run
from harness.store.runs import STEPS, RunFolder, find_run
from harness.store.schema import MIGRATIONS
from harness.store.store import RunInfo, RunParams, Store, StoredAttempt
from harness.store.toolresults import FolderToolLog, RunToolLog, ServedToolLog

__all__ = [
    "MIGRATIONS",
    "STEPS",
    "BatchEntryRow",
    "BatchLog",
    "FolderToolLog",
    "RecordedBatch",
    "RecordingError",
    "RunDir",
    "RunFolder",
    "RunInfo",
    "RunParams",
    "RunToolLog",
    "ServedToolLog",
    "Store",
    "StoreError",
    "StoredAttempt",
    "TaskFiles",
    "find_run",
    "new_run_id",
    "read_call",
    "read_calls",
    "resolve_run",
]
