"""The live view of a night: its events folded into a Board (tasks running, totals), drawn by
console.screen on a terminal (`harness run`, `harness status --watch`); off a terminal
(LineView), one concise line per finished task instead."""

from __future__ import annotations

import datetime as dt
import os
import threading
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any, TextIO

from harness.console.lines import render_events
from harness.results import TaskStatus, money

__all__ = [
    "NOT_PASSING",
    "Board",
    "BoardView",
    "LineView",
    "Running",
    "Totals",
    "is_terminal",
    "message",
    "now",
    "shown",
    "totals_line",
]

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
# Finished and not passing: what the totals call failed (skipped tasks are neither).
NOT_PASSING = frozenset(
    {TaskStatus.FAILED, TaskStatus.PARTIAL, TaskStatus.ERROR, TaskStatus.GUARDRAIL}
)


@dataclass(frozen=True)
class Running:
    """One task in progress: its attempt, the step last heard from, its best passes so far."""

    task_id: str
    attempt: int | None = None
    step: str = "starting"
    passed: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class Totals:
    """The night as a whole: tasks done, passing and failed of its total, spend and cap."""

    tasks: int | None = None
    done: int = 0
    passing: int = 0
    failed: int = 0
    spent: Decimal = Decimal(0)
    cap: Decimal | None = None


@dataclass(frozen=True)
class BoardView:
    """What the board shows at one moment; `finished_here` paces the estimate of the end."""

    run_id: str = ""
    provider: str = ""
    started: dt.datetime | None = None  # this session's start (a resume starts anew)
    running: tuple[Running, ...] = ()
    totals: Totals = Totals()
    finished_here: int = 0  # tasks this session ran to the end (not carried over)
    ended: str | None = None  # the run's status once run_finished is heard
    ended_at: dt.datetime | None = None
    stopping: bool = False


class Board:
    """Events in (from any thread), a consistent BoardView out; `feed` only updates state."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._view = BoardView()
        self._running: dict[str, Running] = {}

    def feed(self, event: dict[str, Any]) -> None:
        name, task = event.get("event"), event.get("task_id")
        with self._lock:
            if name == "run_started":
                self._start(event)
            elif name == "run_finished":
                ended = str(event.get("status"))
                self._view = replace(self._view, ended=ended, ended_at=_when(event))
            elif name == "stop_requested":
                self._view = replace(self._view, stopping=True)
            elif isinstance(task, str):
                self._task_event(str(name), task, event)

    def snapshot(self) -> BoardView:
        with self._lock:
            return replace(self._view, running=tuple(self._running.values()))

    def _start(self, event: dict[str, Any]) -> None:
        """A run (or a resume of it) begins: what earlier sessions spent counts, nothing else."""
        self._running = {}
        tasks = event.get("tasks")
        self._view = BoardView(
            run_id=str(event.get("run_id", "")),
            provider=str(event.get("provider", "")),
            started=_when(event),
            totals=Totals(
                tasks=tasks if isinstance(tasks, int) else None,
                spent=_usd(event.get("spent_usd")) or Decimal(0),
                cap=_usd(event.get("cap_usd")),
            ),
        )

    def _task_event(self, name: str, task: str, event: dict[str, Any]) -> None:
        current = self._running.get(task)
        if name == "task_started":
            self._running[task] = Running(task)
        elif name in ("task_finished", "task_skipped"):
            self._running.pop(task, None)
            self._done(str(event.get("status")), here=name == "task_finished")
        elif name == "call_finished":
            self._spend(_usd(event.get("cost_usd")) or Decimal(0))
            if current is not None:
                attempt = event.get("attempt")
                self._running[task] = replace(current, attempt=attempt, step=str(event.get("step")))
        elif current is not None and name == "tests_ran":
            self._running[task] = replace(current, step="tests")
        elif current is not None and name == "attempt_finished":
            self._running[task] = _best(replace(current, attempt=event.get("n")), event)

    def _done(self, status: str, here: bool) -> None:
        t = self._view.totals
        totals = replace(
            t,
            done=t.done + 1,
            passing=t.passing + (status == "passed"),
            failed=t.failed + (status in NOT_PASSING),
        )
        finished = self._view.finished_here + here
        self._view = replace(self._view, totals=totals, finished_here=finished)

    def _spend(self, amount: Decimal) -> None:
        totals = replace(self._view.totals, spent=self._view.totals.spent + amount)
        self._view = replace(self._view, totals=totals)


def _best(running: Running, event: dict[str, Any]) -> Running:
    """Keep the attempt that passed most (the ratchet keeps that one too)."""
    passed, total = event.get("passed"), event.get("total")
    if not isinstance(passed, int) or not isinstance(total, int):
        return running
    if running.passed is not None and running.passed >= passed:
        return running
    return replace(running, passed=passed, total=total)


def _usd(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _when(event: dict[str, Any]) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(event.get("timestamp")))
    except ValueError:
        return None


# Drawing.


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _estimate(view: BoardView, at: dt.datetime) -> str:
    """The end, at the pace of the tasks this session finished; nothing to say before one."""
    t = view.totals
    if view.ended is not None or view.started is None or t.tasks is None:
        return ""
    left = t.tasks - t.done
    if left <= 0 or view.finished_here == 0:
        return "end: estimating…" if left > 0 else ""
    elapsed = (at - view.started).total_seconds()
    rest = elapsed / view.finished_here * left
    end = (at + dt.timedelta(seconds=rest)).astimezone()
    return f"end ~{end:%H:%M} (in {_clock(rest)})"


def totals_line(view: BoardView, at: dt.datetime) -> str:
    """done/total, passing, failed, spend of the cap, elapsed, the estimate of the end."""
    t = view.totals
    cap = money(t.cap) if t.cap is not None else "no cap"
    until = view.ended_at or at
    elapsed = _clock((until - view.started).total_seconds()) if view.started else "-"
    parts = [
        f"{t.done}/{t.tasks if t.tasks is not None else '?'} done",
        f"{t.passing} passing",
        f"{t.failed} failed",
        f"{money(t.spent)} of {cap}",
        f"{elapsed} elapsed",
        _estimate(view, at),
    ]
    return " · ".join(p for p in parts if p)


# The console of `harness run`.


def shown(event: dict[str, Any], level: str) -> bool:
    return _LEVELS.get(str(event.get("level")), 20) >= max(_LEVELS[level], _LEVELS["warning"])


def is_terminal(stream: TextIO) -> bool:
    """A terminal that can redraw in place (not a pipe, a file, or TERM=dumb)."""
    return stream.isatty() and os.environ.get("TERM", "") != "dumb"


def message(event: dict[str, Any]) -> str:
    return render_events([(event, event.get("attempt"))], colour=False)[0]


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class LineView:
    """Off a terminal (cron, pipes): a line when the run starts, one per finished task and
    one at the end, warnings and errors as they come; nothing else."""

    def __init__(self, stream: TextIO, level: str) -> None:
        self.board = Board()
        self._stream = stream
        self._level = level
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        self.board.feed(event)
        line = self.line(event)
        if line is not None:
            with self._lock:
                self._stream.write(line + "\n")
                self._stream.flush()

    def line(self, event: dict[str, Any]) -> str | None:
        """The line `event` earns at this view's level, if any."""
        if shown(event, self._level):
            return message(event)
        if _LEVELS[self._level] > _LEVELS["info"]:
            return None
        name, view = event.get("event"), self.board.snapshot()
        stamp = str(event.get("timestamp", ""))[11:19]
        if name == "run_started":
            return f"{stamp}  run {view.run_id} started · {totals_line(view, now())}"
        if name == "task_finished":
            passes = f"{event.get('passed')}/{event.get('total')}"
            cost = money(_usd(event.get("cost_usd")) or Decimal(0))
            task = f"{event.get('task_id')} {event.get('status')} {passes} {cost}"
            return f"{stamp}  {task} · {totals_line(view, now())}"
        if name == "run_finished":
            return f"{stamp}  run {view.run_id} {view.ended} · {totals_line(view, now())}"
        return None

    def __enter__(self) -> LineView:
        return self

    def __exit__(self, *_exc: object) -> None:
        pass
