"""The morning after: read a night back (events, compare, preference pairs, status), the
run store opened read only."""

from __future__ import annotations

from harness.morning.compare import Comparison, compare_runs, render_comparison
from harness.morning.events import (
    EventFilter,
    check_filter,
    check_pattern,
    follow_events,
    select_events,
    show_artefact,
    with_attempts,
)
from harness.morning.parsers import add_parsers
from harness.morning.prefs import Export, export_prefs
from harness.morning.status import RunStatusView, read_status, render_status, watch_status

__all__ = [
    "Comparison",
    "EventFilter",
    "Export",
    "RunStatusView",
    "add_parsers",
    "check_filter",
    "check_pattern",
    "compare_runs",
    "export_prefs",
    "follow_events",
    "read_status",
    "render_comparison",
    "render_status",
    "select_events",
    "show_artefact",
    "watch_status",
    "with_attempts",
]
