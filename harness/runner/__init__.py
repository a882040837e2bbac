"""Many tasks: start-up checks, the worker pool, the one catch-all per task, the summary."""

from __future__ import annotations

from harness.runner._args import RunArgs
from harness.runner._inputs import check_inputs, load_task_list
from harness.runner._lock import LOCK_NAME, LockHeld, RunLock
from harness.runner._run import execute, exit_code
from harness.runner._wiring import open_run

__all__ = [
    "LOCK_NAME",
    "LockHeld",
    "RunArgs",
    "RunLock",
    "check_inputs",
    "execute",
    "exit_code",
    "load_task_list",
    "open_run",
]
