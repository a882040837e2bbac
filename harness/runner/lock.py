"""One run per run directory: a kernel file lock that dies with its holder.

filelock's UnixFileLock takes an `flock(2)` on `<run-dir>/.harness.lock`. The kernel drops
an flock when the last descriptor on it closes, which includes its holder being SIGKILLed,
so a lock file left behind by a dead run is simply taken over by the next one: there is no
pid-liveness guessing (pids are reused) and no lock age to tune. Settings, all deliberate:

- `blocking=False`: a second run fails at once (exit 75), it never queues behind the first.
- `fallback_to_soft=False`: on a filesystem without flock, fail closed with an error instead
  of silently switching to a marker-file lock that a crash would leave stuck.
- `preserve_lock_file=True`: the file is never unlinked, so there is no window in which two
  processes lock two different inodes under the same name.
- `thread_local=False`: one lock for the whole process, released by whichever thread exits.

The holder writes `{"pid", "started_at", "host", "boot", "since"}` into the file through the
locked descriptor (filelock opens it without O_TRUNC, so a contender never wipes it); a
contender reads it only to name the holder in its message. The descriptor is not inherited
by the test subprocesses (Python opens files non-inheritable), so an orphaned child of a
killed run cannot keep the lock alive. Keep run directories on a local disk: flock over NFS
depends on the server.

`harness status` and `harness stop` ask who holds the lock without taking it (taking it,
even for a moment, could refuse a night starting at that instant). A pid alone proves
nothing: a SIGKILLed night leaves its file behind and the kernel hands its pid to the next
process. So a holder is the process with the recorded pid *and* the recorded start time
(`/proc/<pid>/stat`, in clock ticks since boot) on the recorded boot; anything else is a
dead night's leftover. `signal_holder` signals through a pidfd opened before that proof, so
the process proven is the process signalled.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import socket
from pathlib import Path
from types import TracebackType

import filelock

__all__ = ["LOCK_NAME", "LockHeld", "RunLock", "live_holder", "signal_holder"]

LOCK_NAME = ".harness.lock"


class LockHeld(Exception):
    """Another live process holds the run directory's lock; the CLI exits 75."""

    def __init__(self, path: Path, holder: dict[str, object]) -> None:
        self.path = path
        self.pid = holder.get("pid")
        self.started_at = holder.get("started_at")
        self.host = holder.get("host")
        who = f"pid {self.pid or '?'}" + (f" on {self.host}" if self.host else "")
        since = f", started {self.started_at}" if self.started_at else ""
        super().__init__(
            f"another harness run holds the lock on {path.parent} ({who}{since});"
            " nothing was done. Wait for it to finish, or stop it"
            f" (kill {self.pid or '<pid>'}) and run again."
        )


def _read_holder(path: Path) -> dict[str, object]:
    """Best effort: the holder may be between taking the lock and writing its details."""
    try:
        data = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def process_start(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat` field 22),
    or None when there is no such process (or no /proc to ask)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    # Field 2 is the command name in parentheses and may hold spaces or parentheses itself.
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def boot_id() -> str:
    """This boot's id: a start time in ticks since boot means nothing across a reboot."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _proven(holder: dict[str, object]) -> int | None:
    """The holder's pid if that very process (same pid, start time and boot, this host) is
    alive, else None: a leftover file whose pid now names another process proves nothing."""
    pid, since = holder.get("pid"), holder.get("since")
    if not isinstance(pid, int) or pid <= 0 or not isinstance(since, int):
        return None
    if holder.get("host") != socket.gethostname() or holder.get("boot") != boot_id():
        return None
    return pid if process_start(pid) == since else None


def live_holder(run_dir: Path) -> int | None:
    """The pid of the live night holding `run_dir`'s lock on this host, or None; read from
    the lock file without taking the lock, so asking never gets in a starting night's way."""
    return _proven(_read_holder(Path(run_dir) / LOCK_NAME))


def signal_holder(run_dir: Path, pid: int, signum: signal.Signals) -> bool:
    """Send `signum` to process `pid` if it is the live night holding `run_dir`'s lock;
    whether it was sent. PermissionError when the holder is another user's.

    The pidfd pins the process before it is proven to be the holder, so a pid reused between
    the proof and the signal cannot receive it."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    try:
        if live_holder(run_dir) != pid:
            return False
        signal.pidfd_send_signal(pidfd, signum)
    except ProcessLookupError:  # it ended since: nothing to stop
        return False
    finally:
        os.close(pidfd)
    return True


class RunLock:
    """`with RunLock(run_dir):` holds the run directory for this process or raises LockHeld."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self.started_at = ""
        self._fd: int | None = None  # borrowed from filelock while held
        self._lock = filelock.FileLock(
            self.path,
            blocking=False,
            thread_local=False,
            fallback_to_soft=False,
            preserve_lock_file=True,
            on_acquired=self._write_holder,
        )

    def _write_holder(self, fd: int) -> None:
        self.started_at = dt.datetime.now().astimezone().isoformat(timespec="seconds")
        holder = {
            "pid": os.getpid(),
            "started_at": self.started_at,
            "host": socket.gethostname(),
            "boot": boot_id(),
            "since": process_start(os.getpid()),
        }
        data = (json.dumps(holder) + "\n").encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        os.fsync(fd)
        self._fd = fd

    def acquire(self) -> None:
        """Take the lock now or raise LockHeld naming the holder; never waits."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise LockHeld(self.path, _read_holder(self.path)) from None

    def release(self) -> None:
        """Release, leaving the file (empty) in place: unlinking a lock file races."""
        if self._lock.is_locked:
            if self._fd is not None:
                os.ftruncate(self._fd, 0)
                self._fd = None
            self._lock.release()

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
