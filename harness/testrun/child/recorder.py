"""Pytest plugin, run inside the sandbox, that streams one record per test phase to the harness.

The plugin pytest sees is thin: each hook hands pytest's own objects to the vault (vault.py),
the one place that holds the record pipe and writes records, and keeps nothing that decides
an outcome. Records carry the launch's nonce and a sequence number; the harness checks both
and treats anything extra, repeated or out of order as tampering. Imports: standard library
and pytest.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from typing import Any

import pytest


class Recorder:
    """The harness's eyes inside pytest; registered before any test or candidate is imported."""

    def __init__(self, config: dict[str, Any], words: Any) -> None:
        self._send: Any = None  # the vault's send(), set once it is open
        self._words = words  # (longrepr, collecting) -> (message, details): text, not verdicts
        self._only = set(config["only"]) if config.get("only") is not None else None
        self._timeout: float = config.get("per_test_timeout") or 0.0

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._send(("session",))

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # Rendered here, outside the vault: rendering runs pytest's (and maybe the candidate's)
        # repr code, and the text decides nothing.
        words = self._words(report.longrepr, True) if report.failed else ("", "")
        self._send(("collectreport", report, *words))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        ids = [item.nodeid for item in items]
        if self._only is not None:
            dropped = [item for item in items if item.nodeid not in self._only]
            items[:] = [item for item in items if item.nodeid in self._only]
            if dropped:
                config.hook.pytest_deselected(items=dropped)
        self._send(("collected", config, items, ids))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        armed = self._timeout > 0
        if armed:
            signal.signal(signal.SIGALRM, _alarm(self._timeout))
            signal.setitimer(signal.ITIMER_REAL, self._timeout)
        try:
            return (yield)
        finally:
            if armed:
                signal.setitimer(signal.ITIMER_REAL, 0)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self._send(("start", nodeid))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        """Observe the test body's own result, independently of the report built from it."""
        self._send(("body", item.nodeid, "started"))
        try:
            result = yield
        except BaseException:
            self._send(("body", item.nodeid, "raised"))
            raise
        self._send(("body", item.nodeid, "ok"))
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Iterator:
        """Boundary mode: a test failed by a value the boundary could not carry says so."""
        report = yield
        codec = sys.modules.get("harness_boundary.codec")
        failed = call.excinfo.type if call.excinfo is not None else None
        if codec is not None and failed is not None and issubclass(failed, codec.CarryError):
            report.user_properties.append(("harness_uncarried", True))
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        words = self._words(report.longrepr, False) if report.outcome != "passed" else ("", "")
        self._send(("phase", report, *words))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self._send(("finish", nodeid))

    def end(self, status: object) -> None:
        """Called by the bootstrap after pytest.main returned (or raised)."""
        self._send(("end", str(status)))


def own_code() -> frozenset:
    """The code objects of the hook methods: the only callers the vault obeys."""
    return frozenset(
        f.__code__ for f in vars(Recorder).values() if callable(f) and hasattr(f, "__code__")
    )


def _alarm(timeout: float):
    def on_alarm(signum: int, frame: object) -> None:
        __tracebackhide__ = True
        pytest.fail(f"Timeout: the test ran longer than {timeout:g}s")

    return on_alarm
