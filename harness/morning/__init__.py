"""The morning after: read a night back (events, compare, preference pairs), replay it, and
deliver its shipped files to git."""

from __future__ import annotations

from harness.morning.board import Board, BoardView, is_terminal
from harness.morning.compare import Comparison, compare_runs, render_comparison
from harness.morning.deliver import DeliveryError, GitDelivery
from harness.morning.events import (
    EventFilter,
    check_filter,
    check_pattern,
    follow_events,
    render_events,
    select_events,
    show_artefact,
    with_attempts,
)
from harness.morning.parsers import add_parsers
from harness.morning.prefs import Export, export_prefs
from harness.morning.runs import RunFolder, find_run
from harness.morning.screen import night_console
from harness.morning.status import RunStatusView, read_status, render_status, watch_status

__all__ = [
    "Board",
    "BoardView",
    "Comparison",
    "DeliveryError",
    "EventFilter",
    "Export",
    "GitDelivery",
    "RunFolder",
    "RunStatusView",
    "add_parsers",
    "check_filter",
    "check_pattern",
    "compare_runs",
    "export_prefs",
    "find_run",
    "follow_events",
    "is_terminal",
    "night_console",
    "read_status",
    "render_comparison",
    "render_events",
    "render_status",
    "select_events",
    "show_artefact",
    "watch_status",
    "with_attempts",
]
