"""The JavaScript boundary, harness side: a candidate process for each test process that asks.

The tests' launch holds a folder of the harness's named pipes (bound into its sandbox, in no
other): a `tickets` pipe and, for each ticket, a pair `<ticket>.up` (the test process writes)
and `<ticket>.down` (it reads). Each test file's node process, at its first import of the
stand-in, reads one ticket (8 bytes, written whole: each read takes exactly one) and opens its
pair. At its first message the broker joins the pair to a candidate process it started
beforehand (a warm one: node started, the candidate module loaded, beside the tests' own
start-up) and relays bytes between them. The candidate's process holds two pipes of its own
and nothing else of ours: it has no path to the folder, the tests' tree or the harness.
Neither side starts a thread for its pipes (jsnode/wire.cjs).

The broker reads no message but one: the answer to the `describe` it sends each candidate
process as it starts (the module's format and export names; the first one's is what the
stand-in is written from). Everything after it is relayed as it is; the test side decodes it.
Writes never block the broker's thread: what a reader has not taken yet waits in a buffer, and
past a cap the broker stops reading from that pair's other end until it has.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
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
MAX_BUFFERED = (64 << 20) + (1 << 20)  # per direction: past it, the sender waits (a line's cap)
TICKETS = "tickets"
_TICKETS_AHEAD = 4  # tickets (and pairs of pipes) ready before any test process asks
_CHUNK = 1 << 16
_DESCRIBE = b'{"op":"describe","q":0}\n'


@dataclass
class _Candidate:
    child: Child
    send_fd: int  # ours: the pipe it reads
    recv_fd: int  # ours: the pipe it writes
    reply: bytearray = field(default_factory=bytearray)  # its describe answer, until whole
    described: bool = False
    pair: _Pair | None = None  # the test process it serves
    ending: bool = False  # its process ended: close once what it sent has been taken


@dataclass
class _Pair:
    """One ticket's named pipes, harness ends: `up` read, `down` written (held read-write, so
    the test process's blocking open of it returns at once)."""

    ticket: int
    up: int
    down: int
    cand: _Candidate | None = None


class JsBroker:
    """One launch's candidate processes; `start(fds)` starts one holding the pipe ends `fds`
    (read, the same pipe read again, write: jsnode/wire.cjs)."""

    def __init__(
        self,
        start: Callable[[tuple[int, int, int]], Child],
        folder: str,
        wanted: int = MAX_CANDIDATES,
    ) -> None:
        """`folder`: where the named pipes are made (the folder bound into the tests' launch);
        `wanted`: how many connections to keep a warm process ready for (the test files: node
        runs each in a process of its own; a runner that runs them all in one process connects
        once); past it a connection waits for a process started then."""
        self._start = start
        self._wanted = wanted
        self._accepted = 0
        self.folder = folder
        self._issued = 0
        self._all: list[_Candidate] = []
        self._pairs: list[_Pair] = []
        self._spare: _Candidate | None = None
        self._readers: dict[int, object] = {}  # fd we read -> its _Pair (up) or _Candidate
        self._outbox: dict[int, bytearray] = {}  # fd we write -> what waits for its reader
        self._feeds: dict[int, int] = {}  # fd we write -> the fd its bytes are read from
        self._paused: set[int] = set()  # fds not read while their destination is full
        self._outputs: dict[int, tuple[_Candidate, bytearray]] = {}
        self.output = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sel = selectors.DefaultSelector()
        path = os.path.join(folder, TICKETS)
        os.mkfifo(path, 0o600)
        os.chmod(path, 0o644)  # the tests' sandbox user reads tickets; the folder is ours
        self._tickets = os.open(path, os.O_RDWR | os.O_NONBLOCK)  # never an end of file
        self._wake_r, self._wake_w = os.pipe()  # close() ends the loop's wait at once
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        self._thread: threading.Thread | None = None
        self.info: dict | None = None  # the first answer to `describe`
        self._described = threading.Event()
        for _ in range(min(wanted, _TICKETS_AHEAD)):
            self._issue()

    def serve(self) -> None:
        """Start the first candidate process and begin answering the tests' connections (once:
        a second call does nothing)."""
        if self._thread is not None:
            return
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
            for pair in self._pairs:
                self._close_pair(pair)
        self._sel.close()
        for fd in (self._tickets, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    # ----- tickets and pairs ------------------------------------------------------------------

    def _issue(self) -> None:
        """One more pair of named pipes, then its ticket: a test process that reads the ticket
        finds both pipes there."""
        if self._issued >= MAX_CANDIDATES:
            return
        self._issued += 1
        ticket = self._issued
        up_path, down_path = (
            os.path.join(self.folder, f"{ticket:07d}.{e}") for e in ("up", "down")
        )
        os.mkfifo(up_path, 0o600)
        os.chmod(up_path, 0o622)
        os.mkfifo(down_path, 0o600)
        os.chmod(down_path, 0o644)
        # Read non-blocking: no event until a writer came (and an end of file once it left).
        up = os.open(up_path, os.O_RDONLY | os.O_NONBLOCK)
        down = os.open(down_path, os.O_RDWR | os.O_NONBLOCK)
        pair = _Pair(ticket, up, down)
        self._pairs.append(pair)
        self._readers[up] = pair
        self._sel.register(up, selectors.EVENT_READ)
        if self._issued == MAX_CANDIDATES:  # the last ticket, then refusals for any later ask
            refusals = b"0000000\n" * MAX_CANDIDATES
            os.write(self._tickets, f"{ticket:07d}\n".encode() + refusals)
        else:
            os.write(self._tickets, f"{ticket:07d}\n".encode())

    def _close_pair(self, pair: _Pair) -> None:
        for fd in (pair.up, pair.down):
            if fd < 0:
                continue
            self._forget(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
        pair.up = pair.down = -1
        for end in ("up", "down"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.folder, f"{pair.ticket:07d}.{end}"))

    # ----- the broker's thread ----------------------------------------------------------------

    def _spawn(self) -> _Candidate:
        to_r, to_w = os.pipe()  # the harness -> the candidate
        from_r, from_w = os.pipe()  # the candidate -> the harness
        # The pipe it reads, opened a second time: a description of its own, so its event loop's
        # non-blocking reads and its blocking ones do not share the O_NONBLOCK flag.
        again = os.open(f"/proc/self/fd/{to_r}", os.O_RDONLY)
        try:
            child = self._start((to_r, again, from_w))
        except BaseException:
            for fd in (to_w, from_r):
                os.close(fd)
            raise
        finally:
            for fd in (to_r, again, from_w):
                os.close(fd)
        os.set_blocking(to_w, False)
        os.set_blocking(from_r, False)
        cand = _Candidate(child, to_w, from_r)
        self._all.append(cand)
        self._send(to_w, _DESCRIBE)  # warms it: the module loads now, not on the tests' time
        self._readers[from_r] = cand
        self._sel.register(from_r, selectors.EVENT_READ)
        if child.output_fd >= 0:
            buf = bytearray()
            self._outputs[child.output_fd] = (cand, buf)
            self._sel.register(child.output_fd, selectors.EVENT_READ)
        return cand

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                for key, events in self._sel.select(timeout=1.0):
                    if key.fd == self._wake_r:
                        continue
                    with self._lock:
                        if events & selectors.EVENT_WRITE:
                            self._flush(key.fd)
                        if events & selectors.EVENT_READ:
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
        if fd in self._outputs:
            self._keep_output(fd)
            return
        owner = self._readers.get(fd)
        if isinstance(owner, _Pair):
            if owner.cand is None and not self._join(owner):
                return
            self._relay(fd, owner.cand.send_fd if owner.cand else -1)
        elif isinstance(owner, _Candidate):
            self._from_candidate(owner)

    def _join(self, pair: _Pair) -> bool:
        """A test process's first message (or its end): give it a warm candidate process."""
        cand, self._spare = self._spare, None
        if cand is None or cand.ending or cand.child.proc.poll() is not None:
            if len(self._all) >= MAX_CANDIDATES:
                self._close_pair(pair)
                return False
            try:
                cand = self._spawn()
            except Exception as exc:
                log.warning("candidate_start_failed", error=type(exc).__name__)
                self._close_pair(pair)
                return False
        cand.pair, pair.cand = pair, cand
        self._feeds[cand.send_fd] = pair.up
        self._feeds[pair.down] = cand.recv_fd
        self._accepted += 1
        self._issue()  # a ticket for the next test process to ask
        if self._accepted < self._wanted:
            self._prestart()
        if cand.reply and cand.described:  # what it sent before anyone asked
            data, cand.reply = bytes(cand.reply), bytearray()
            self._send(pair.down, data)
        return True

    def _relay(self, src: int, dst: int) -> None:
        """The test process's bytes to its candidate process; its end ends the pair."""
        pair = self._readers[src]
        assert isinstance(pair, _Pair)
        data = self._read(src)
        if data is None:
            return
        if not data:
            if pair.cand is not None:
                self._end(pair.cand)
            self._close_pair(pair)
            return
        if dst >= 0:
            self._send(dst, data)

    def _from_candidate(self, cand: _Candidate) -> None:
        data = self._read(cand.recv_fd)
        if data is None:
            return
        if not data:
            if not cand.described:
                self._note({"format": "", "names": [], "error": "its process ended at load"})
            cand.ending = True
            self._forget(cand.recv_fd)
            down = cand.pair.down if cand.pair is not None else -1
            if not self._outbox.get(down):
                self._end(cand)
            return
        if not cand.described:
            cand.reply += data
            if b"\n" not in cand.reply:
                return
            line, _, rest = bytes(cand.reply).partition(b"\n")
            cand.described = True
            self._note(read_description(line))
            cand.reply = bytearray(rest)
            data = b""
        if cand.pair is None:  # nobody to give it to yet (nothing asked: nothing is due)
            cand.reply += data
            return
        if cand.reply:
            data, cand.reply = bytes(cand.reply) + data, bytearray()
        if data:
            self._send(cand.pair.down, data)

    @staticmethod
    def _read(fd: int) -> bytes | None:
        """What is there; b"" at the end (or a broken pipe), None when nothing is yet."""
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _note(self, info: dict) -> None:
        if self.info is None:
            self.info = info
            self._described.set()

    # ----- writes that never block ------------------------------------------------------------

    def _send(self, dst: int, data: bytes) -> None:
        box = self._outbox.setdefault(dst, bytearray())
        box += data
        self._flush(dst)

    def _flush(self, dst: int) -> None:
        box = self._outbox.get(dst)
        if box is None:
            return
        try:
            while box:
                done = os.write(dst, box[:_CHUNK])
                del box[:done]
        except BlockingIOError:
            pass
        except OSError:
            box.clear()  # its reader is gone; the other end's close says so
        self._watch(dst, bool(box))
        src = self._feeds.get(dst, -1)
        if len(box) > MAX_BUFFERED and src not in self._paused and src in self._readers:
            self._paused.add(src)
            self._sel.unregister(src)
        elif len(box) <= MAX_BUFFERED and src in self._paused:
            self._paused.discard(src)
            self._sel.register(src, selectors.EVENT_READ)
        if not box:
            self._after_flush(dst)

    def _watch(self, dst: int, waiting: bool) -> None:
        registered = dst in self._sel.get_map()
        if waiting and not registered:
            self._sel.register(dst, selectors.EVENT_WRITE)
        elif not waiting and registered:
            self._sel.unregister(dst)

    def _after_flush(self, dst: int) -> None:
        """A candidate process that ended closes once the test process has what it sent."""
        for cand in self._all:
            if cand.ending and cand.pair is not None and cand.pair.down == dst:
                self._end(cand)
                return

    def _forget(self, fd: int) -> None:
        self._readers.pop(fd, None)
        self._outbox.pop(fd, None)
        self._feeds.pop(fd, None)
        self._paused.discard(fd)
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(fd)

    # ----- output and the end ------------------------------------------------------------------

    def _keep_output(self, fd: int) -> None:
        _, buf = self._outputs[fd]
        try:
            data = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
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
        """Its pipes closed (the test process it served reads an end of file) and its
        process tree killed."""
        for fd in (cand.send_fd, cand.recv_fd):
            if fd < 0:
                continue
            self._forget(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
        cand.send_fd = cand.recv_fd = -1
        if cand.pair is not None:
            self._close_pair(cand.pair)
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
