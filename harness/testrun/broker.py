"""Boundary mode, harness side: start a candidate process whenever the test process asks for
one, and hand it over as a socket; when the launch ends, kill every one of them.

The test process holds one end of a control socket. Each byte it sends asks for a fresh
candidate process (the first import, or a replacement after a test hung or crashed); the
previous one is killed first, so at most one serves the tests at a time. The first one is
started as the broker starts, beside the test process's own start-up, so the tests' first use
of the candidate does not wait for a launch (a warm process; it serves every later test of
the launch unless one hangs or crashes it). The new process's socket end
goes to the test process by SCM_RIGHTS and to nothing else: the candidate has no path to the
harness, and the test process no way to start anything itself.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import threading
from collections.abc import Callable

import structlog

from harness.testrun.launch import Child
from harness.testrun.reap import kill_tree

__all__ = ["Broker"]

log = structlog.get_logger(__name__)
MAX_CANDIDATES = 64  # per launch: a test process asking for more is refused


class Broker:
    """One launch's candidate processes; `start(fd)` starts one holding the socket `fd`."""

    def __init__(self, start: Callable[[int], Child]) -> None:
        self._start = start
        self._ours, theirs = socket.socketpair()
        self.test_fd: int | None = theirs.detach()
        self._children: list[Child] = []
        self._spare: tuple[Child, socket.socket] | None = None  # started, not yet handed over
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sel = selectors.DefaultSelector()
        self._thread = threading.Thread(target=self._serve, name="boundary-broker", daemon=True)
        self._thread.start()

    def handed_over(self) -> None:
        """The test process has its end now: close ours, so its death ends our reads."""
        if self.test_fd is not None:
            os.close(self.test_fd)
            self.test_fd = None

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._ours.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=10)
        self.handed_over()
        with self._lock:
            if self._spare is not None:
                self._spare[1].close()
                self._spare = None
            for child in self._children:
                self._end(child)
            self._children.clear()
        self._sel.close()
        self._ours.close()

    def _serve(self) -> None:
        self._prestart()
        sel = self._sel
        sel.register(self._ours, selectors.EVENT_READ)
        while not self._stop.is_set():
            for key, _ in sel.select(timeout=0.5):
                if key.fileobj is self._ours:
                    if not self._asked():
                        return
                elif key.fd in sel.get_map():  # not ended by a request in this round
                    _drain(key.fd, sel)
            with self._lock:
                for child in self._children:
                    if child.output_fd >= 0 and child.output_fd not in sel.get_map():
                        sel.register(child.output_fd, selectors.EVENT_READ)

    def _end(self, child: Child) -> None:
        if child.output_fd >= 0 and child.output_fd in self._sel.get_map():
            self._sel.unregister(child.output_fd)
        if child.records_fd >= 0:
            kill_tree(child)
            for fd in (child.records_fd, child.output_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)
            child.records_fd = child.output_fd = -1

    def _asked(self) -> bool:
        try:
            data = self._ours.recv(64)
        except OSError:
            return False
        for _ in data:
            self._hand_one()
        return bool(data)

    def _prestart(self) -> None:
        """The launch's first candidate process, started now (on the broker's thread, while
        the harness starts the test process)."""
        with self._lock:
            if self._stop.is_set():
                return
            try:
                self._spare = self._spawn()
            except Exception as exc:  # asked again on the tests' first request
                log.warning("candidate_start_failed", error=type(exc).__name__)

    def _spawn(self) -> tuple[Child, socket.socket]:
        """A new candidate process and our end of its socket (the caller holds the lock)."""
        mine, theirs = socket.socketpair()
        try:
            child = self._start(theirs.fileno())
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        self._children.append(child)
        return child, mine

    def _hand_one(self) -> None:
        with self._lock:
            spare, self._spare = self._spare, None
            for child in self._children:
                if spare is None or child is not spare[0]:
                    self._end(child)
            if spare is not None and spare[0].proc.poll() is None:
                child, mine = spare
            else:
                if spare is not None:  # died before it was wanted
                    spare[1].close()
                    self._end(spare[0])
                if len(self._children) >= MAX_CANDIDATES:
                    self._ours.sendall(b"x")
                    return
                try:
                    child, mine = self._spawn()
                except Exception as exc:
                    log.warning("candidate_start_failed", error=type(exc).__name__)
                    self._ours.sendall(b"x")
                    return
            with contextlib.suppress(OSError):
                socket.send_fds(self._ours, [b"k"], [mine.fileno()])
            mine.close()


def _drain(fd: int, sel: selectors.BaseSelector) -> None:
    """The candidate's own fd 1 and 2 (its sys.stdout is relayed to the tests): discarded."""
    try:
        data = os.read(fd, 1 << 16)
    except OSError:
        data = b""
    if not data:
        sel.unregister(fd)
