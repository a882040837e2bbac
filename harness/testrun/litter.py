"""What a fallback run left in the host's shared folders, removed once its processes are dead.

Without bubblewrap there is no private /tmp: the run's throwaway uid can write wherever anyone
may (/tmp, /var/tmp, the RAM-backed /dev/shm, /run/lock), and what it writes would outlive the
run, filling disk or memory night after night. No account and no other process has that uid,
so everything it owns there is the run's: removed without following a link, looking only into
folders it owns or anyone may write to (nowhere else could it have written).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable

import structlog

__all__ = ["SHARED_FOLDERS", "after_run", "sweep_uid"]

log = structlog.get_logger(__name__)

SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
_MAX_DEPTH = 8  # a folder anyone may write to, inside another: deep nests are not walked


def after_run(kind: str, uid: int | None) -> None:
    """Once a run's processes are gone: sweep its uid's leftovers (the fallback only; under
    bubblewrap the shared folders are private to the sandbox)."""
    if kind == "bwrap" or uid is None:
        return
    removed = sweep_uid(uid)
    if removed:
        log.info("sandbox_litter_removed", uid=uid, entries=removed)


def sweep_uid(uid: int, folders: Iterable[str] | None = None) -> int:
    """Remove every entry owned by `uid` in `folders` (SHARED_FOLDERS by default; and in the
    folders anyone may write to below them); returns how many were removed. Never raises."""
    removed = 0
    for folder in SHARED_FOLDERS if folders is None else folders:
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.lstat(folder).st_mode):
                removed += _sweep(folder, uid, 0)
    return removed


def _sweep(folder: str, uid: int, depth: int) -> int:
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if st.st_uid == uid:
            removed += _remove(path, st)
        elif stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IWOTH and depth < _MAX_DEPTH:
            removed += _sweep(path, uid, depth + 1)
    return removed


def _remove(path: str, st: os.stat_result) -> int:
    """A real folder goes whole (rmtree never follows a link); anything else is unlinked."""
    try:
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        return 0
    return 1
