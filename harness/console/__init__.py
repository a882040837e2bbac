"""What a terminal shows of a night: its events folded into a board (`harness run`'s live
board and `harness status --watch`), the line per task off a terminal, and one event as an
aligned line (`harness events`)."""

from __future__ import annotations

from harness.console.board import NOT_PASSING, Board, BoardView, LineView, Totals, is_terminal
from harness.console.lines import render_events
from harness.console.screen import LiveBoard, WatchBoard, night_console, render_board

__all__ = [
    "NOT_PASSING",
    "Board",
    "BoardView",
    "LineView",
    "LiveBoard",
    "Totals",
    "WatchBoard",
    "is_terminal",
    "night_console",
    "render_board",
    "render_events",
]
