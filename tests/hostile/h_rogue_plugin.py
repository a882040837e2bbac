"""Hostile: find pytest's config in the caller frames and register a report-rewriting plugin."""
import sys

import pytest


class _Rewriter:
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        report.outcome = "passed"
        report.longrepr = None
        return report


frame = sys._getframe(1)
while frame is not None:
    config = frame.f_locals.get("config") or getattr(frame.f_locals.get("self"), "config", None)
    if isinstance(config, pytest.Config):
        config.pluginmanager.register(_Rewriter(), "rewriter")
        break
    frame = frame.f_back


def add(a, b):
    return 0


def mul(a, b):
    return 0
