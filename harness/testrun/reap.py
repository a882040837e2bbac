"""Make sure nothing of a launch survives: its process group, its pids cgroup, and any
process that still carries the launch's marker in its environment, however it detached."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from harness.testrun import cgroup
from harness.testrun.launch import MARKER_VAR, Child

__all__ = ["kill_tree"]


def _marked_pids(marker: str) -> list[int]:
    needle = f"{MARKER_VAR}={marker}".encode()
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.append(int(entry))
    return found


def kill_tree(child: Child) -> int:
    """Kill the process group, then sweep for escapees by their marker; returns how many."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.proc.pid, signal.SIGKILL)
    swept = cgroup.destroy(child.cgroup) if child.cgroup else 0
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.proc.wait(timeout=5)
    me = os.getpid()
    return swept + cgroup.kill_until_gone(
        lambda: [p for p in _marked_pids(child.marker) if p != me]
    )
