"""Hostile: monkeypatch pytest's report factory so every report says passed."""
from _pytest.reports import TestReport

_original = TestReport.from_item_and_call.__func__


def _always_passed(cls, item, call):
    report = _original(cls, item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report


TestReport.from_item_and_call = classmethod(_always_passed)


def add(a, b):
    return 0


def mul(a, b):
    return 0
