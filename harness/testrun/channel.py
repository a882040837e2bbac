"""Watch one sandboxed process: read its records and output, enforce the clocks."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import selectors
import time
from dataclasses import dataclass, field
from typing import Any

from harness.testrun.launch import Child
from harness.testrun.reap import kill_tree

__all__ = ["Watch", "watch"]

_OUTPUT_CAP = 200_000  # bytes of pytest's terminal output kept per launch (the rest is read)
_CHUNK = 65536
_TICK = 0.02  # seconds between reads of a live launch's pipes, when its exit can be awaited
_PIPE_SIZE = 1 << 20
_MAX_LINE = 4 << 20  # no honest record is this long (a collection of ~20k tests is ~2 MiB)
# A flood is a forgery, and must not exhaust the harness's memory: past either cap the launch
# is ended and counted as tampering. Honest runs stay far below (a record is ~1 KiB).
_MAX_RECORDS = 200_000
_MAX_RECORD_BYTES = 32 << 20


@dataclass
class Watch:
    """What one launch produced: raw record lines (parsed, or None if garbage) and why it ended."""

    records: list[dict[str, Any] | None] = field(default_factory=list)
    output: bytearray = field(default_factory=bytearray)
    output_dropped: int = 0
    ended_by: str = "exit"  # "exit" | "deadline" | "test_timeout" | "collect_timeout" | "flood"
    hung_test: str | None = None
    exit_code: int | None = None
    swept: int = 0


class _Reader:
    """Splits the record stream into lines and tracks the test in flight for the watchdog."""

    def __init__(self, result: Watch) -> None:
        self.result, self.buffer = result, b""
        self.current: str | None = None
        self.since = time.monotonic()
        self.collected = False
        self.received = 0

    def feed(self, data: bytes) -> None:
        self.received += len(data)
        if self.flooded:
            return
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            self._take(line)
        if len(self.buffer) > _MAX_LINE:
            self._take(b"")  # an endless line: recorded as garbage, and dropped
            self.buffer = b""

    @property
    def flooded(self) -> bool:
        return len(self.result.records) > _MAX_RECORDS or self.received > _MAX_RECORD_BYTES

    def _take(self, line: bytes) -> None:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: forged, absurdly nested JSON
            record = None
        self.result.records.append(record if _plain(record) else None)
        kind = record.get("k") if isinstance(record, dict) else None
        if kind == "collected":
            self.collected, self.since = True, time.monotonic()
        elif kind == "start":
            self.current, self.since = record.get("id"), time.monotonic()
        elif kind == "finish":
            self.current = None

    def flush(self) -> None:
        if self.buffer:
            self._take(self.buffer)
            self.buffer = b""


_SCALARS = (str, int, float, bool, type(None))


def _plain(record: object) -> bool:
    """The recorder's shape: a small dict of scalars and lists of strings. Anything else is
    a forgery, kept as None (so a flood of nested JSON cannot grow the harness's memory)."""
    if not isinstance(record, dict) or len(record) > 16:
        return False
    return all(
        isinstance(v, _SCALARS) or (isinstance(v, list) and all(isinstance(i, str) for i in v))
        for v in record.values()
    )


def _exited(child: Child) -> bool:
    """Whether the process has exited, without reaping it: while its zombie holds the pid,
    the process group id cannot be reused, so the kill that follows hits only our group."""
    try:
        return os.waitid(os.P_PID, child.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _read(fd: int) -> bytes | None:
    """Non-blocking read: data, b"" for nothing now, None at end of file."""
    try:
        data = os.read(fd, _CHUNK)
    except BlockingIOError:
        return b""
    return data or None


def _keep_output(result: Watch, data: bytes) -> None:
    room = _OUTPUT_CAP - len(result.output)
    result.output += data[: max(room, 0)]
    result.output_dropped += max(len(data) - max(room, 0), 0)


def _overdue(reader: _Reader, deadline: float, test_s: float, collect_s: float) -> str | None:
    if reader.flooded:
        return "flood"
    now = time.monotonic()
    if now >= deadline:
        return "deadline"
    if not reader.collected and now - reader.since > collect_s:
        return "collect_timeout"
    if reader.current is not None and now - reader.since > test_s:
        return "test_timeout"
    return None


def watch(child: Child, deadline: float, test_s: float, collect_s: float) -> Watch:
    """Pump both pipes until the process exits or a clock runs out; then kill and sweep.

    Where the process's exit can be waited for itself (a pidfd), the loop sleeps on that and
    reads the pipes every _TICK: a launch writes five records a test, and waking the harness
    for each one cost the sandboxed processes a wake-up, and CPU on a machine they share.
    The pipes are widened so a burst fits between reads; the clocks are checked as before.
    Without a pidfd, every write wakes the loop, as it always did."""
    result = Watch()
    reader = _Reader(result)
    live = {child.records_fd: "rec", child.output_fd: "out"}
    sel = selectors.DefaultSelector()
    exit_fd = _exit_fd(child)
    if exit_fd is not None:
        sel.register(exit_fd, selectors.EVENT_READ)
        for fd in live:
            _widen(fd)
    else:
        for fd in live:
            sel.register(fd, selectors.EVENT_READ)
    tick = _TICK if exit_fd is not None else 0.05
    try:
        while not _exited(child):
            reason = _overdue(reader, deadline, test_s, collect_s)
            if reason:
                result.ended_by, result.hung_test = reason, reader.current
                break
            ready = {key.fd for key, _ in sel.select(timeout=tick)}
            for fd in [fd for fd in live if exit_fd is not None or fd in ready]:
                _pump(live, fd, reader, result)
                if fd not in live and exit_fd is None:
                    sel.unregister(fd)
        result.swept = kill_tree(child)
        result.exit_code = child.proc.poll()
        _drain(live, reader, result)
    finally:
        sel.close()
        for fd in (child.records_fd, child.output_fd, exit_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
    return result


def _exit_fd(child: Child) -> int | None:
    """A pidfd of the launch's process (readable once it has exited), or None where there
    is none (not Linux, a kernel before 5.3)."""
    try:
        return os.pidfd_open(child.proc.pid)
    except (AttributeError, OSError):
        return None


def _widen(fd: int) -> None:
    """Let the pipe hold ~1 MiB between reads (a Linux pipe holds 64 KiB); best effort."""
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)


def _pump(live: dict[int, str], fd: int, reader: _Reader, result: Watch) -> None:
    """Read what the pipe holds now (at most a widened pipe's worth, so a writer that keeps
    it full cannot hold the loop away from its clocks); at its end it is watched no more."""
    for _ in range(_PIPE_SIZE // _CHUNK + 1):
        data = _read(fd)
        if data is None:
            del live[fd]
            return
        if not data:
            return
        if live[fd] == "rec":
            reader.feed(data)
        else:
            _keep_output(result, data)
        if len(data) < _CHUNK:
            return


def _drain(live: dict[int, str], reader: _Reader, result: Watch) -> None:
    """After the kill: read what is left; every writer is dead, so EOF comes quickly."""
    stop = time.monotonic() + 2.0
    with selectors.DefaultSelector() as sel:
        for fd in live:
            sel.register(fd, selectors.EVENT_READ)
        while live and time.monotonic() < stop:
            for key, _ in sel.select(timeout=0.05):
                _pump(live, key.fd, reader, result)
                if key.fd not in live:
                    sel.unregister(key.fd)
    reader.flush()
