"""One event as a person reads it: a line of time, level, task, attempt, event and its
fields, aligned with its neighbours (`harness events`, the console's lines and warnings)."""

from __future__ import annotations

import json
from typing import Any

from harness.errors import printable

__all__ = ["render_events"]

# Shown in their own columns (or not at all: every line of one run has the same run_id).
_COLUMNS = frozenset({"event", "level", "timestamp", "run_id", "task_id", "attempt"})
_MAX_VALUE = 200
_RESET, _DIM, _BOLD = "\033[0m", "\033[2m", "\033[1m"
_LEVEL_COLOUR = {"warning": "\033[33m", "error": "\033[31m", "critical": "\033[31m"}


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if isinstance(value, str) and (
        not value or any(c in value for c in ' "=\n\t') or printable(value) != value
    ):  # one line, unambiguous where the value has spaces, control characters escaped
        text = json.dumps(value)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def _fields(event: dict[str, Any]) -> str:
    """key=value for every field not in a column; null and false fields are left out."""
    return " ".join(
        f"{key}={_value(value)}"
        for key, value in event.items()
        if key not in _COLUMNS and value is not None and value is not False
        and not (event["event"] == "attempt_finished" and key == "n")
    )  # fmt: skip


def render_events(
    rows: list[tuple[dict[str, Any], int | None]], colour: bool, widths: tuple[int, int] = (0, 0)
) -> list[str]:
    """One aligned line per event: time, level, task, attempt, event, then its fields;
    `widths`: the least width of the task and event columns (lines rendered one at a time)."""
    task_w = max((len(str(e.get("task_id") or "")) for e, _ in rows), default=0)
    name_w = max((len(str(e["event"])) for e, _ in rows), default=0)
    task_w, name_w = max(task_w, widths[0]), max(name_w, widths[1])
    lines = []
    for event, attempt in rows:
        stamp = str(event.get("timestamp", ""))[11:23] or "-"
        level = str(event.get("level", "info"))
        task = str(event.get("task_id") or "").ljust(task_w)
        number = f"#{attempt}" if attempt is not None else ""
        name = str(event["event"]).ljust(name_w)
        fields = _fields(event)
        if colour:
            tint = _LEVEL_COLOUR.get(level, "")
            stamp, name = f"{_DIM}{stamp}{_RESET}", f"{tint or _BOLD}{name}{_RESET}"
            level = f"{tint}{level[:4].ljust(4)}{_RESET}"
        else:
            level = level[:4].ljust(4)
        lines.append(f"{stamp}  {level}  {task}  {number:>3}  {name}  {fields}".rstrip())
    return lines
