"""Pytest plugin, run inside the sandbox, that streams one record per test phase to the harness.

Each record is one JSON line written straight to an inherited pipe (no buffering), so what has
been sent cannot be taken back or rewritten. Records carry the launch's nonce and a sequence
number; the harness checks both, counts records against the pristine test ids and treats
anything extra, repeated or out of order as tampering. Imports: standard library and pytest.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Iterator
from typing import Any

import pytest

_MAX_DETAIL_LINES = 60
_HEAD_LINES = 12


def cap_lines(text: str, limit: int = _MAX_DETAIL_LINES) -> str:
    """Keep the head and the tail (where the E lines are) of a long traceback."""
    lines = text.rstrip().splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    tail = limit - _HEAD_LINES - 1
    omitted = len(lines) - _HEAD_LINES - tail
    return "\n".join([*lines[:_HEAD_LINES], f"... ({omitted} lines omitted)", *lines[-tail:]])


_FRAME = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+|\?+): in \S+")


def drop_library_frames(text: str, library: tuple[str, ...]) -> str:
    """Keep the frames of the tests and the candidate; pytest's, importlib's and the stdlib's
    own frames are noise in a fix prompt."""
    kept, skipping = [], False
    for line in text.splitlines():
        frame = _FRAME.match(line)
        if frame:
            path = frame.group("path")
            skipping = path.startswith("<") or os.path.realpath(path).startswith(library)
        elif not line.startswith((" ", "\t")) or not line.strip():
            skipping = skipping and not line.startswith("E ")
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def describe(longrepr: Any, library: tuple[str, ...], collecting: bool = False) -> tuple[str, str]:
    """(message, details) of a report's longrepr: the exception line and the short traceback."""
    if longrepr is None:
        return "", ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        return str(longrepr[2]), ""
    text = drop_library_frames(str(longrepr), library)
    e_lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    crash = getattr(longrepr, "reprcrash", None)
    message = "" if collecting else (getattr(crash, "message", "") or "").strip()
    message = message.splitlines()[0] if message else (e_lines[-1] if e_lines else "")
    if message.startswith("assert "):
        message = f"AssertionError: {message}"
    return message[:500], cap_lines(text)


class Recorder:
    """The harness's eyes inside pytest; registered before any test or candidate is imported."""

    def __init__(self, config: dict[str, Any], guard: Any = None):
        # Bound now, so later monkeypatching of os/json/time cannot intercept the records.
        self._write, self._dumps = os.write, json.dumps
        self._fd: int = config["fd"]
        self._nonce: str = config["nonce"]
        self._only = set(config["only"]) if config.get("only") is not None else None
        self._timeout: float = config.get("per_test_timeout") or 0.0
        self._guard = guard
        self._library = tuple(p + os.sep for p in config["library"])
        self._frame = sys._getframe
        self._own_code = frozenset(
            f.__code__ for f in vars(Recorder).values() if hasattr(f, "__code__")
        )
        self._seq = 0
        self._raw: dict[str, str] = {}
        self._tamper_sent = False
        self.emit("hello", pid=os.getpid())

    def emit(self, kind: str, **data: Any) -> None:
        """Write one record; a broken channel only loses records, which counts against the run."""
        if self._frame(1).f_code not in self._own_code:
            kind, data = "tamper", {"reason": "a record was emitted from outside the recorder"}
        record = {"n": self._nonce, "s": self._seq, "k": kind, **data}
        self._seq += 1
        line = (self._dumps(record, default=str) + "\n").encode()
        try:
            while line:
                line = line[self._write(self._fd, line) :]
        except OSError:
            pass

    def _check(self, nodeid: str | None = None) -> None:
        if self._guard is None or self._tamper_sent:
            return
        reason = self._guard(nodeid)
        if reason:
            self._tamper_sent = True
            self.emit("tamper", reason=reason)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            message, details = describe(report.longrepr, self._library, collecting=True)
            self.emit("collect_error", id=report.nodeid, msg=message, details=details)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        ids = [item.nodeid for item in items]
        if self._only is not None:
            kept = [item for item in items if item.nodeid in self._only]
            dropped = [item for item in items if item.nodeid not in self._only]
            if dropped:
                config.hook.pytest_deselected(items=dropped)
            items[:] = kept
        if self._guard is not None:
            self._guard.watch(config.pluginmanager, items)
        self._check()
        self.emit("collected", ids=ids, selected=[item.nodeid for item in items])

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        armed = self._timeout > 0
        if armed:
            signal.signal(signal.SIGALRM, self._on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self._timeout)
        try:
            return (yield)
        finally:
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0)

    def _on_alarm(self, signum: int, frame: object) -> None:
        __tracebackhide__ = True
        pytest.fail(f"Timeout: the test ran longer than {self._timeout:g}s")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.emit("start", id=nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        """Observe the test body's own result, independently of the report built from it."""
        self._raw[item.nodeid] = "started"
        try:
            result = yield
        except BaseException:
            self._raw[item.nodeid] = "raised"
            raise
        self._raw[item.nodeid] = "ok"
        return result

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._check(report.nodeid)
        message, details = ("", "")
        if report.outcome != "passed":
            message, details = describe(report.longrepr, self._library)
        raw = self._raw.get(report.nodeid, "none") if report.when == "call" else ""
        self.emit(
            "phase",
            id=report.nodeid,
            when=report.when,
            outcome=report.outcome,
            raw=raw,
            msg=message,
            details=details,
            dur=round(report.duration, 4),
        )

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.emit("finish", id=nodeid)

    def end(self, status: object) -> None:
        """Called by the bootstrap after pytest.main returned (or raised)."""
        self._check()
        self.emit("end", status=str(status))
