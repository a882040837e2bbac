"""Many tasks: start-up checks, the worker pool, the one catch-all per task, the summary."""

from __future__ import annotations

from harness.runner.args import RunArgs
from harness.runner.inputs import check_inputs, load_task_list, write_check
from harness.runner.lock import LOCK_NAME, LockHeld, RunLock, live_holder, signal_holder
from harness.runner.pool import execute, exit_code
from harness.runner.wiring import open_run

__all__ = [
    "LOCK_NAME",
    "LockHeld",
    "RunArgs",
    "RunLock",
    "check_inputs",
    "execute",
    "exit_code",
    "live_holder",
    "load_task_list",
    "open_run",
    "signal_holder",
    "write_check",
]
