"""The board on a terminal, drawn with rich: `harness run`'s live board (warnings above it)
and `harness status --watch`'s; night_console picks it or the lines of console.board."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from harness.console.board import (
    Board,
    BoardView,
    LineView,
    Totals,
    is_terminal,
    message,
    now,
    shown,
    totals_line,
)
from harness.log import ConsoleSink, console_view

__all__ = ["LiveBoard", "WatchBoard", "night_console", "render_board"]


def render_board(view: BoardView, at: dt.datetime) -> RenderableType:
    """The board: a header, one line per running task, the totals."""
    if view.started is None:
        return Text("harness: starting…", style="dim")
    state = f"{view.ended}" if view.ended else "stopping" if view.stopping else "running"
    head = Text.assemble(("run ", "dim"), (view.run_id or "?", "bold"), f" · {view.provider} · ")
    head.append(state, style="green" if view.ended == "completed" else "yellow")
    rows = Table.grid(padding=(0, 2))
    for column in ("task", "attempt", "step", "passes"):
        rows.add_column(column, no_wrap=True, justify="right" if column == "passes" else "left")
    for task in sorted(view.running, key=lambda r: r.task_id):
        passes = f"{task.passed}/{task.total}" if task.passed is not None else "-"
        attempt = f"attempt {task.attempt}" if task.attempt is not None else ""
        rows.add_row(Text(task.task_id, style="cyan"), attempt, task.step, f"passes {passes}")
    return Group(head, rows, Text(totals_line(view, at), style="bold"))


class LiveBoard:
    """On a terminal: the board redrawn by rich's Live at its own refresh rate (never by the
    thread that logged), warnings and errors printed above it."""

    def __init__(self, stream: TextIO, level: str, console: Console | None = None) -> None:
        self.board = Board()
        self._level = level
        self._console = console or Console(file=stream, stderr=stream is sys.stderr)
        self._live = Live(
            console=self._console,
            get_renderable=lambda: render_board(self.board.snapshot(), now()),
            refresh_per_second=2,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def __call__(self, event: dict[str, Any]) -> None:
        self.board.feed(event)
        if shown(event, self._level):
            self._console.print(Text(message(event), style=_style(event)), soft_wrap=True)

    def __enter__(self) -> LiveBoard:
        self._live.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._live.stop()


def _style(event: dict[str, Any]) -> str:
    return "red" if event.get("level") in ("error", "critical") else "yellow"


class WatchBoard:
    """`harness status --watch` on a terminal: the board of the events read so far, with the
    totals the store gives (`show`), redrawn by rich's Live."""

    def __init__(self, board: Board, stream: TextIO) -> None:
        console = Console(file=stream)
        self._board = board
        self._totals: Totals | None = None
        self._live = Live(
            console=console, get_renderable=self._render, refresh_per_second=2, transient=False
        )

    def show(self, view: Any) -> None:
        """Take the store's view (a RunStatusView) as the totals from now on."""
        self._totals = view.totals()

    def _render(self) -> RenderableType:
        view = self._board.snapshot()
        if self._totals is not None:
            view = replace(view, totals=self._totals)
        return render_board(view, now())

    def __enter__(self) -> WatchBoard:
        self._live.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._live.refresh()
        self._live.stop()


@contextmanager
def night_console(level: str, stream: TextIO) -> Iterator[ConsoleSink | None]:
    """The console of `harness run`: the live board on a terminal, concise lines off one;
    `--log-level debug` keeps structlog's full lines (every event, as before the board)."""
    if level == "debug":
        yield None
        return
    view = LiveBoard(stream, level) if is_terminal(stream) else LineView(stream, level)
    with view, console_view(view):
        yield view
