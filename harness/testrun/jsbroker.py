"""The JavaScript boundary, harness side: a candidate process for each test process that asks.

The tests' launch holds a listening Unix socket (bound into its sandbox, in no other); each
test file's node process connects once, through the stand-in module at the candidate's place.
For each connection the broker takes a candidate process it started beforehand (a warm one:
node started, the candidate module loaded, beside the tests' own start-up) and relays bytes
between the two sockets. The candidate's process holds one end of a socket pair and nothing
else of ours: it has no path to the listening socket, the tests' tree or the harness.

The broker reads no message but one: the answer to the `describe` it sends each candidate
process as it starts (the module's format and export names; the first one's is what the
stand-in is written from). Everything after it is relayed as it is; the test side decodes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from harness.testrun.launch import Child
from harness.testrun.reap import kill_tree

__all__ = ["JsBroker"]

log = structlog.get_logger(__name__)

MAX_CANDIDATES = 64  # per launch: one per test file's process, plus a spare
MAX_CANDIDATE_OUTPUT = 1 << 20  # what is kept of the candidate processes' own output
_CHUNK = 1 << 16
_DESCRIBE = b'{"op":"describe","q":0}\n'


@dataclass
class _Candidate:
    child: Child
    sock: socket.socket  # our end of its socket pair
    reply: bytearray = field(default_factory=bytearray)  # its describe answer, until whole
    described: bool = False
    peer: socket.socket | None = None  # the test process it serves


class JsBroker:
    """One launch's candidate processes; `start(fd)` starts one holding the socket `fd`."""

    def __init__(
        self, start: Callable[[int], Child], path: str, wanted: int = MAX_CANDIDATES
    ) -> None:
        """`wanted`: how many connections to keep a warm process ready for (the test files:
        node runs each in a process of its own; a runner that runs them all in one process
        connects once); past it a connection waits for a process started then."""
        self._start = start
        self._wanted = wanted
        self._accepted = 0
        self.path = path
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        os.chmod(path, 0o666)  # the tests' sandbox user connects; the folder is ours
        self._listener.listen(16)
        self._listener.setblocking(False)
        self._all: list[_Candidate] = []
        self._spare: _Candidate | None = None
        self._peers: dict[int, _Candidate] = {}  # fd of either end of a relay -> its candidate
        self._outputs: dict[int, tuple[_Candidate, bytearray]] = {}
        self.output = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._listener, selectors.EVENT_READ)
        self._wake_r, self._wake_w = os.pipe()  # close() ends the loop's wait at once
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        self._thread: threading.Thread | None = None
        self.info: dict | None = None  # the first answer to `describe`
        self._described = threading.Event()

    def serve(self) -> None:
        """Start the first candidate process and begin answering the tests' connections."""
        self._spare = self._spawn()
        self._thread = threading.Thread(target=self._loop, name="js-boundary", daemon=True)
        self._thread.start()

    def describe(self, timeout_s: float) -> dict:
        """The first candidate process's answer to `describe`: {format, names, error} (after
        `serve`); a process that died first, or did not answer in time, gives an error."""
        if not self._described.wait(timeout_s):
            return {"format": "", "names": [], "error": "the candidate's process did not answer"}
        assert self.info is not None
        return self.info

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(timeout=10)
        with self._lock:
            for cand in self._all:
                self._end(cand)
        self._sel.close()
        self._listener.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    # ----- the broker's thread ----------------------------------------------------------------

    def _spawn(self) -> _Candidate:
        mine, theirs = socket.socketpair()
        try:
            child = self._start(theirs.fileno())
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        mine.sendall(_DESCRIBE)  # warms it: the module loads now, not on the tests' time
        mine.setblocking(True)
        cand = _Candidate(child, mine)
        self._all.append(cand)
        self._peers[mine.fileno()] = cand
        self._sel.register(mine, selectors.EVENT_READ)
        if child.output_fd >= 0:
            buf = bytearray()
            self._outputs[child.output_fd] = (cand, buf)
            self._sel.register(child.output_fd, selectors.EVENT_READ)
        return cand

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                for key, _ in self._sel.select(timeout=1.0):
                    if key.fd != self._wake_r:
                        self._ready(key.fd)
        except Exception as exc:  # never raise on a daemon thread: the launch fails instead
            log.warning("js_boundary_broker_failed", error=type(exc).__name__)

    def _prestart(self) -> None:
        if len(self._all) >= MAX_CANDIDATES:
            return
        try:
            self._spare = self._spawn()
        except Exception as exc:
            log.warning("candidate_start_failed", error=type(exc).__name__)
            self._spare = None

    def _ready(self, fd: int) -> None:
        if fd == self._listener.fileno():
            self._accept()
        elif fd in self._outputs:
            self._keep_output(fd)
        elif fd in self._peers:
            self._relay(fd)

    def _accept(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except (BlockingIOError, OSError):
            return
        with self._lock:
            cand, self._spare = self._spare, None
            if cand is None or cand.child.proc.poll() is not None:
                if len(self._all) >= MAX_CANDIDATES:
                    conn.close()
                    return
                try:
                    cand = self._spawn()
                except Exception as exc:
                    log.warning("candidate_start_failed", error=type(exc).__name__)
                    conn.close()
                    return
            conn.setblocking(True)
            cand.peer = conn
            self._peers[conn.fileno()] = cand
            self._sel.register(conn, selectors.EVENT_READ)
            self._accepted += 1
            if self._accepted < self._wanted:
                self._prestart()

    def _relay(self, fd: int) -> None:
        cand = self._peers[fd]
        from_tests = cand.peer is not None and fd == cand.peer.fileno()
        src, dst = (cand.peer, cand.sock) if from_tests else (cand.sock, cand.peer)
        assert src is not None
        try:
            data = src.recv(_CHUNK)
        except OSError:
            data = b""
        if not data:
            if not cand.described:
                self._note({"format": "", "names": [], "error": "its process ended at load"})
            self._end(cand)
            return
        if not from_tests and not cand.described:
            cand.reply += data
            if b"\n" not in cand.reply:
                return
            line, _, rest = bytes(cand.reply).partition(b"\n")
            cand.described = True
            self._note(read_description(line))
            cand.reply = bytearray(rest)
            data = b""
        if dst is None:  # nobody to give it to yet (nothing asked: nothing is due)
            cand.reply += data
            return
        if cand.reply:
            data, cand.reply = bytes(cand.reply) + data, bytearray()
        if data:
            self._send(dst, data, cand)

    def _note(self, info: dict) -> None:
        if self.info is None:
            self.info = info
            self._described.set()

    def _send(self, dst: socket.socket, data: bytes, cand: _Candidate) -> None:
        try:
            dst.sendall(data)
        except OSError:
            self._end(cand)

    def _keep_output(self, fd: int) -> None:
        _, buf = self._outputs[fd]
        try:
            data = os.read(fd, _CHUNK)
        except OSError:
            data = b""
        if not data:
            self._sel.unregister(fd)
            del self._outputs[fd]
            if buf and len(self.output) < MAX_CANDIDATE_OUTPUT:
                self.output += buf[: MAX_CANDIDATE_OUTPUT - len(self.output)]
            return
        if len(buf) < MAX_CANDIDATE_OUTPUT:
            buf += data

    def _end(self, cand: _Candidate) -> None:
        for sock in (cand.peer, cand.sock):
            if sock is None or sock.fileno() < 0:
                continue
            self._peers.pop(sock.fileno(), None)
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(sock)
            sock.close()
        cand.peer = None
        if cand.child.records_fd >= 0:
            kill_tree(cand.child)
            fd = cand.child.output_fd
            if fd in self._outputs:
                self._keep_rest(fd)
            for f in (cand.child.records_fd, cand.child.output_fd):
                with contextlib.suppress(OSError):
                    os.close(f)
            cand.child.records_fd = cand.child.output_fd = -1

    def _keep_rest(self, fd: int) -> None:
        _, buf = self._outputs.pop(fd)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._sel.unregister(fd)
        with contextlib.suppress(OSError):
            os.set_blocking(fd, False)
            while len(buf) < MAX_CANDIDATE_OUTPUT and (data := os.read(fd, _CHUNK)):
                buf += data
        if buf and len(self.output) < MAX_CANDIDATE_OUTPUT:
            self.output += buf[: MAX_CANDIDATE_OUTPUT - len(self.output)]


def read_description(line: bytes) -> dict:
    """A candidate process's answer to `describe`, read defensively (it is the candidate's
    process that wrote it): {format, names, error}."""
    try:
        answer = json.loads(line)
        value = answer["v"]
        if answer.get("ok") is not True:
            return {"format": "", "names": [], "error": str(value.get("s") or value.get("m"))}
        found = {p[0]: p[1] for p in value["v"] if isinstance(p, list) and len(p) == 2}
        names = found.get("names")
        error = found.get("error")
        return {
            "format": found.get("format") if found.get("format") in ("cjs", "esm") else "",
            "names": [n for n in names["v"] if isinstance(n, str)]
            if isinstance(names, dict)
            else [],
            "error": error if isinstance(error, str) else "",
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return {"format": "", "names": [], "error": "its answer could not be read"}
