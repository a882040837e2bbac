"""Run lock: one run per run directory, contenders refused at once, dead holders taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.runner import LOCK_NAME, LockHeld, RunLock, live_holder, signal_holder

_HOLDER = textwrap.dedent(
    """
    import sys
    from harness.runner import RunLock
    with RunLock(sys.argv[1]) as lock:
        print("locked", lock.started_at, flush=True)
        sys.stdin.readline()  # hold until told (or killed)
    print("released", flush=True)
    """
)

_CONTENDER = textwrap.dedent(
    """
    import os, sys
    from harness.runner import LockHeld, RunLock
    try:
        with RunLock(sys.argv[1]):
            print("acquired", os.getpid(), flush=True)
    except LockHeld as exc:
        print(exc, file=sys.stderr)
        sys.exit(75)
    """
)


def _python(script: str, run_dir: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, str(run_dir)], text=True, **kwargs)


@pytest.fixture
def holder(tmp_path: Path):
    """A separate process holding the lock on tmp_path/runs until its stdin is closed."""
    proc = _python(_HOLDER, tmp_path / "runs", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    word, started_at = proc.stdout.readline().split()
    assert word == "locked"
    yield proc, started_at
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        stream.close()


def test_lock_file_names_the_holder(tmp_path: Path) -> None:
    """While held, the lock file holds the holder's pid and start time."""
    with RunLock(tmp_path / "runs") as lock:
        holder = json.loads((tmp_path / "runs" / LOCK_NAME).read_text())

    assert (os.getpid(), lock.started_at) == (holder["pid"], holder["started_at"])


def test_second_lock_in_the_same_process_is_refused(tmp_path: Path) -> None:
    """Two RunLocks on one run dir conflict even inside one process."""
    with RunLock(tmp_path), pytest.raises(LockHeld) as info:
        RunLock(tmp_path).acquire()

    assert os.getpid() == info.value.pid


def test_release_leaves_the_file_and_frees_the_lock(tmp_path: Path) -> None:
    """After release the (empty) lock file stays in place and the next run takes the lock."""
    with RunLock(tmp_path):
        pass
    with RunLock(tmp_path):
        pass

    assert (tmp_path / LOCK_NAME).read_text() == ""


def test_contender_process_fails_at_once_naming_the_holder(tmp_path: Path, holder) -> None:
    """A second process gets LockHeld at once (no waiting) whose message names pid and start."""
    proc, started_at = holder
    contender = subprocess.run(
        [sys.executable, "-c", _CONTENDER, str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert (
        contender.returncode,
        f"pid {proc.pid}" in contender.stderr,
        started_at in contender.stderr,
    ) == (75, True, True)


def test_lock_of_a_sigkilled_holder_is_taken_over(tmp_path: Path, holder) -> None:
    """kill -9 leaves the lock file behind, and the next run takes the lock over."""
    proc, _ = holder
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stale = json.loads((tmp_path / "runs" / LOCK_NAME).read_text())
    contender = subprocess.run(
        [sys.executable, "-c", _CONTENDER, str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert (proc.pid, 0, "acquired") == (
        stale["pid"],
        contender.returncode,
        contender.stdout.split()[0],
    )


def test_holder_that_exits_cleanly_releases(tmp_path: Path, holder) -> None:
    """A holder that finishes releases the lock for the next run."""
    proc, _ = holder
    proc.stdin.write("\n")
    proc.stdin.flush()
    said = proc.stdout.readline().strip()
    proc.wait()
    with RunLock(tmp_path / "runs") as lock:
        now = json.loads((tmp_path / "runs" / LOCK_NAME).read_text())

    assert (said, now["pid"], now["started_at"]) == ("released", os.getpid(), lock.started_at)


def test_live_holder_names_the_process_that_holds_the_lock(tmp_path: Path, holder) -> None:
    """A night holding the lock in another process is its live holder."""
    proc, _ = holder

    assert live_holder(tmp_path / "runs") == proc.pid


def test_a_leftover_lock_whose_pid_was_reused_has_no_live_holder(tmp_path: Path, holder) -> None:
    """After a SIGKILL the pid in the file may name an unrelated live process: not a holder,
    and signal_holder sends it nothing."""
    proc, _ = holder
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    lock = tmp_path / "runs" / LOCK_NAME
    unrelated = subprocess.Popen(["sleep", "600"])
    try:
        lock.write_text(json.dumps({**json.loads(lock.read_text()), "pid": unrelated.pid}))

        found = live_holder(tmp_path / "runs")
        sent = signal_holder(tmp_path / "runs", unrelated.pid, signal.SIGTERM)
        alive = unrelated.poll() is None
    finally:
        unrelated.kill()
        unrelated.wait()
    assert (found, sent, alive) == (None, False, True)
