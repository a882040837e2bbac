"""Who runs candidate code: a throwaway unprivileged uid per run, and an interpreter it can reach.

As root, the tests run as a uid that no user has and no other process runs as, so candidate
code can neither read the harness's keys (another user's /proc/<pid>/environ is closed), nor
write the harness's files (ledger, run store, run directory), nor signal any process but its
own. Without bubblewrap the interpreter may sit where that uid cannot walk (pyenv under /root):
the harness opens it and its libraries, and the process reaches them through /proc/self/fd,
whose links skip the permission checks of the folders above. Not root and no bubblewrap: no
uid to drop to, so the fallback refuses unless the operator sets UNSAFE_VAR.
"""

from __future__ import annotations

import contextlib
import functools
import grp
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass

__all__ = ["UNSAFE_VAR", "Interpreter", "can_drop", "open_interpreter", "sandbox_uid", "unsafe"]

UNSAFE_VAR = "HARNESS_UNSAFE_TESTS_AS_HARNESS_USER"
_UID_LOW, _UID_HIGH = 0x7E000000, 0x7EFFFFFF  # far above any allocated uid


def unsafe() -> bool:
    """Whether the operator accepted running candidate code as the harness's own user."""
    return os.environ.get(UNSAFE_VAR) == "1"


def _has_processes(uid: int) -> bool:
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{entry}").st_uid == uid:
                return True
    return False


def _is_known(uid: int) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            continue
    return False


def sandbox_uid() -> int | None:
    """A uid (and gid of the same number) that no account and no process has; None unless
    root, since only root can change to it."""
    if os.geteuid() != 0:
        return None
    while True:
        uid = _UID_LOW + secrets.randbelow(_UID_HIGH - _UID_LOW)
        if not _is_known(uid) and not _has_processes(uid):
            return uid


@dataclass(frozen=True)
class Interpreter:
    """The command that starts Python as the sandbox uid, and the open files it goes through."""

    argv: tuple[str, ...]  # before the script's path
    env: tuple[tuple[str, str], ...]
    sitedirs: tuple[str, ...]  # site-packages, added by the bootstrap (site is not imported)
    fds: tuple[int, ...]  # the harness closes its copies once the process started

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _site_packages() -> list[str]:
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(os.path.realpath(paths[k]) for k in ("purelib", "platlib")))


def open_interpreter() -> Interpreter:
    """Open this interpreter, its home and its site-packages for a process of another uid."""
    opened: list[int] = []

    def fd(path: str, flags: int) -> str:
        opened.append(os.open(path, flags))
        return f"/proc/self/fd/{opened[-1]}"

    try:
        exe = fd(os.path.realpath(sys.executable), os.O_PATH)
        home = fd(os.path.realpath(sys.base_prefix), os.O_RDONLY | os.O_DIRECTORY)
        sites = tuple(fd(p, os.O_RDONLY | os.O_DIRECTORY) for p in _site_packages())
    except OSError:
        for n in opened:
            os.close(n)
        raise
    # -S: the bootstrap adds the venv's site-packages itself; PYTHONHOME rules out -I and -E,
    # which is safe because the environment is built from an allowlist.
    env = (("PYTHONHOME", home), ("LD_LIBRARY_PATH", f"{home}/lib"))
    return Interpreter((exe, "-s", "-S", "-P", "-B"), env, sites, tuple(opened))


@functools.cache
def can_drop() -> bool:
    """As root: whether a throwaway uid can start the interpreter and import pytest from a
    folder the sandbox uses (checked once)."""
    if os.geteuid() != 0 or not os.path.isdir("/proc/self/fd"):
        return False
    folder = tempfile.mkdtemp(prefix="harness-probe-")
    try:
        os.chmod(folder, 0o711)
        return _probe(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _probe(folder: str) -> bool:
    uid = sandbox_uid()
    try:
        interpreter = open_interpreter()
    except OSError:
        return False
    sites = ",".join(repr(s) for s in interpreter.sitedirs)
    code = f"import site\nfor s in [{sites}]: site.addsitedir(s)\nimport pytest"
    try:
        done = subprocess.run(
            [*interpreter.argv, "-c", code],
            pass_fds=interpreter.fds,
            user=uid,
            group=uid,
            extra_groups=[],
            capture_output=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", **dict(interpreter.env)},
            cwd=folder,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        interpreter.close()
    return done.returncode == 0
