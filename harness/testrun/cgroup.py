"""A pids cgroup per launch, for the fallback sandbox run by root, and a memory cgroup beside it.

RLIMIT_NPROC does not bind uid 0, so without bubblewrap (which runs the tests as nobody) a fork
bomb run as root would only meet the kernel's pid_max. A fresh pids cgroup caps the count and
lists every member for the final sweep, however it detached itself. A memory cgroup of the same
name caps the resident memory of the whole launch, every process of it together: RLIMIT_AS is
per process, so without it a launch could hold max_procs × memory_mb. Best effort: None (or no
memory group) when cgroups are not writable here.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import stat
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["companions", "create", "destroy", "members", "sweep_stale"]

_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
_MEMORY_V1 = Path("/sys/fs/cgroup/memory")


def create(max_procs: int, owner: int | None = None, memory_mb: int | None = None) -> Path | None:
    """A new pids cgroup capped at `max_procs`, joinable by `owner` (the sandbox uid); with
    `memory_mb`, the launch's memory capped too (cgroup v2: the same group; v1: a memory group
    of the same name, listed by `companions`)."""
    if os.geteuid() != 0:
        return None
    for root in _ROOTS:
        path = root / f"harness-{secrets.token_hex(6)}"
        try:
            path.mkdir()
        except OSError:
            continue
        try:
            (path / "pids.max").write_text(str(max_procs))
            if owner is not None:
                os.chown(path / "cgroup.procs", owner, owner)
            if memory_mb is not None:
                _limit_memory(path, memory_mb << 20, owner)
            return path
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
    return None


def _limit_memory(path: Path, limit: int, owner: int | None) -> None:
    """cgroup v2: memory.max in the launch's own group; v1: a memory group of the same name."""
    if (path / "memory.max").exists():
        (path / "memory.max").write_text(str(limit))
        with contextlib.suppress(OSError):  # absent without swap accounting
            (path / "memory.swap.max").write_text("0")
        return
    group = _MEMORY_V1 / path.name
    try:
        group.mkdir()
    except OSError:
        return  # no writable memory hierarchy here: the rlimits stay the only cap
    try:
        (group / "memory.limit_in_bytes").write_text(str(limit))
        with contextlib.suppress(OSError):  # absent without swap accounting
            (group / "memory.memsw.limit_in_bytes").write_text(str(limit))
        if owner is not None:
            os.chown(group / "cgroup.procs", owner, owner)
    except OSError:
        with contextlib.suppress(OSError):
            group.rmdir()


def companions(path: Path) -> list[Path]:
    """Every cgroup of the launch whose pids group is `path`: the bootstrap joins them all."""
    memory = _MEMORY_V1 / path.name
    return [path, *([memory] if memory.is_dir() and memory != path else [])]


def members(path: Path) -> list[int]:
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def kill_until_gone(find: Callable[[], list[int]], rounds: int = 200) -> int:
    """SIGKILL whatever `find` lists until it lists nothing; returns how many were killed.

    Rounds repeat because a fork bomb refills between them (its rlimit caps how far).
    """
    killed = 0
    for _round in range(rounds):
        pids = find()
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed += len(pids)
        time.sleep(0.01)
    return killed


def destroy(path: Path) -> int:
    """Kill every member until none is left, then remove the cgroup; returns how many died."""
    groups = companions(path)
    killed = kill_until_gone(lambda: sorted({p for g in groups for p in members(g)}))
    for group in reversed(groups):
        for _try in range(50):  # members linger briefly as zombies until they are reaped
            try:
                group.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)
    return killed


def sweep_stale(max_age_s: float = 600) -> int:
    """Remove empty launch cgroups left by a harness that was killed outright. rmdir fails on
    a cgroup with members, so a live launch is never touched; only real folders this user
    created are (lstat: a link is never followed)."""
    removed = 0
    for root in (*_ROOTS, _MEMORY_V1):
        for path in root.glob("harness-*") if root.is_dir() else ():
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                mine = stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
                if mine and time.time() - st.st_mtime > max_age_s:
                    path.rmdir()
                    removed += 1
    return removed
