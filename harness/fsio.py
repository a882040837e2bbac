"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half.

`write_atomic` is also durable (synced before and after the rename): for what a crash must
not lose (the shipped output, the summary). `write_log` is atomic only, for the run folder's
per-call copies (prompts, replies, candidates) that the run store already holds: a power
loss may lose the latest of them, never money or results, and no call waits on the disk."""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from harness.keys import scrub

__all__ = [
    "check_target",
    "parent_problem",
    "remove_stale_temps",
    "write_atomic",
    "write_log",
    "write_refused",
]

_UMASK = os.umask(0)
os.umask(_UMASK)


def check_target(
    path: Path,
    *,
    inputs: Mapping[Path, str] = {},  # read only, never mutated
    replace: bool = False,
    ours: Callable[[Path], bool] | None = None,
) -> str | None:
    """Why the harness may not write the file `path`, or None: the one check every path it
    writes passes (outputs, metrics, exports, run folders).

    Never one of `inputs` (resolved path → what it is, e.g. "the task list"), symlinks
    followed; never a directory or a special file; an existing regular file only when
    `replace` (the command's --force, or a path whose content is the harness's own) or
    `ours(path)` says the harness wrote it.
    """
    try:
        target = Path(path).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a NUL byte, a symlink loop
        return f"{path} cannot be resolved ({exc}); choose another path"
    resolved = {Path(p).resolve(): name for p, name in inputs.items()}
    if target in resolved:
        return f"{path} is {resolved[target]}, an input of the harness; write somewhere else"
    try:
        info = target.stat()
    except (FileNotFoundError, NotADirectoryError):
        return parent_problem(str(path), target)
    except OSError as exc:
        return f"{path} cannot be checked ({exc.strerror}); choose another path"
    if stat.S_ISDIR(info.st_mode):
        return f"{path} is a directory; name a file in it, e.g. {Path(path) / 'out'}"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file; remove it or choose another path"
    if replace:
        return None
    if ours is None:  # no way to tell who wrote it: say only what is known
        return f"{path} already exists; pass --force to replace it"
    if ours(target):
        return None
    return f"{path} already exists and the harness did not write it; pass --force to replace it"


def parent_problem(label: str, target: Path) -> str | None:
    """Why a file cannot be created at `target` (shown as `label`), or None: a missing file
    is fine when its nearest existing ancestor is a folder."""
    for parent in target.parents:
        try:
            info = parent.stat()
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            return f"{label}: its folder {parent} cannot be checked ({exc.strerror})"
        if not stat.S_ISDIR(info.st_mode):
            return f"{label}: {parent} is a file, not a folder; choose another path"
        return None
    return None


def write_atomic(path: Path, text: str, *, verify: Callable[[Path], None] | None = None) -> None:
    """Write `text` to `path` via a synced temp file in the same folder and a rename.

    `verify`, when given, is called with the finished temp file just before the rename; if
    it raises, the temp file is removed and `path` is left exactly as it was.
    """
    _write(Path(path), text, verify, durable=True)


def write_log(path: Path, text: str) -> None:
    """Write `text` to `path` via a temp file and a rename, without syncing (see above)."""
    _write(Path(path), text, None, durable=False)


def _write(path: Path, text: str, verify: Callable[[Path], None] | None, durable: bool) -> None:
    text = scrub(text)  # no secret reaches the disk, whatever wrote the text
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes 0600 files; keep the replaced file's mode, else the umask's default.
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if verify is not None:
            verify(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if not durable:
        return
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# The disk, not the path, refused: full, over quota, read-only, failing. A night that meets
# one cannot keep its records (the run store, the run folder, events.jsonl), so it halts.
_DISK_REFUSED = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG}
_SQLITE_REFUSED = {sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR}


def write_refused(exc: BaseException | None) -> bool:
    """Whether `exc` (or what caused it) is the disk refusing a write: an OSError such as
    ENOSPC or EDQUOT, or SQLite's "database or disk is full" and I/O errors."""
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno in _DISK_REFUSED:
            return True
        if isinstance(exc, sqlite3.Error) and exc.sqlite_errorcode & 0xFF in _SQLITE_REFUSED:
            return True
        exc = exc.__cause__
    return False


def remove_stale_temps(path: Path) -> list[Path]:
    """Delete temp files a killed write_atomic left beside `path`; returns what it removed.

    Only call this while holding the run lock: a live writer's temp file looks the same.
    """
    path = Path(path)
    if not path.parent.is_dir():
        return []
    stale = sorted(path.parent.glob(f".{path.name}.*.tmp"))
    for temp in stale:
        temp.unlink(missing_ok=True)
    return stale
