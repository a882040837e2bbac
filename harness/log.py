"""The one place structlog is configured: JSON lines to events.jsonl, and on the console either
readable lines on stderr or a view that `harness run` installs (console_view)."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import structlog

from harness.errors import printable
from harness.keys import scrub

__all__ = ["ConsoleSink", "close_logging", "configure_logging", "console_view", "redact", "scrub"]

# A console view: takes every event (scrubbed, stamped, all levels) and decides what to show.
ConsoleSink = Callable[[dict[str, Any]], None]
_views: list[ConsoleSink] = []  # the innermost console_view is the one in use


def redact(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    """Processor: mask secrets in every string field, however deep, whatever its name."""
    return {key: _scrubbed(value) for key, value in event.items()}


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrubbed(v) for v in value]
    return value


class _JsonTee:
    """Processor: append the event as one JSON line to a file, then pass it on unchanged."""

    def __init__(self, stream: TextIO, on_fault: Callable[[BaseException], None]) -> None:
        self._stream = stream
        self._on_fault = on_fault
        self._lock = threading.Lock()
        self._failed = False

    def __call__(self, _logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
        line = json.dumps(event, default=str, sort_keys=False)
        fault = None
        with self._lock:
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except (OSError, ValueError) as exc:  # told once; the logging code never sees it
                if not self._failed:
                    self._failed, fault = True, exc
        if fault is not None:  # outside the lock: the fault's handler may log
            print(f"harness: events.jsonl not written: {fault}", file=sys.stderr)
            self._on_fault(fault)
        return event


def _printable(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    """Processor: every string in the event with its control characters escaped (a path or
    a key from a file may hold an ESC), for the console and its views."""
    return {key: _escaped(value) for key, value in event.items()}


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {k: _escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_escaped(v) for v in value)
    return value


def _ignore(_exc: BaseException) -> None:
    pass


def configure_logging(
    events: Path | None = None,
    *,
    level: str = "info",
    console: bool = True,
    on_fault: Callable[[BaseException], None] = _ignore,
):
    """Route every event to `events` (JSON lines) and, at `level` and up, to stderr.
    `on_fault` is told, once, when `events` cannot be written (a full disk).

    Returns the open events file (or None) so the caller can close it at run end.
    """
    stream = open(events, "a", encoding="utf-8") if events else None  # noqa: SIM115
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        redact,
    ]
    if stream is not None:
        processors.append(_JsonTee(stream, on_fault))
    processors.append(_printable)  # the file keeps the values; the terminal gets them escaped
    if console and _views:
        processors.append(_Feed(_views[-1]))
    elif console:
        processors.append(_drop_below(level))
        processors.append(structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    else:
        processors.append(_drop_all)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
        logger_factory=_StderrLogger,
        cache_logger_on_first_use=False,
    )
    return stream


@contextmanager
def console_view(sink: ConsoleSink) -> Iterator[None]:
    """While inside, every configure_logging hands console events to `sink` instead of
    printing them as lines (events.jsonl is unchanged); the last configuration is kept."""
    _views.append(sink)
    try:
        yield
    finally:
        _views.remove(sink)


class _Feed:
    """Processor: give the event to a console view, then drop it (the view shows it or not).
    A fault in the view is reported once and never reaches the code that logged the event."""

    def __init__(self, sink: ConsoleSink) -> None:
        self._sink = sink
        self._failed = False

    def __call__(self, _logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
        try:
            self._sink(event)
        except Exception as exc:
            if not self._failed:
                self._failed = True
                with contextlib.suppress(OSError, ValueError):  # stderr itself may be gone
                    print(f"harness: console view failed: {exc!r}", file=sys.stderr)
        raise structlog.DropEvent


class _StderrLogger:
    """Writes each rendered line to whatever sys.stderr is *now*.

    structlog's PrintLogger binds the stream when the logger is made; a stream swapped and
    closed since (pytest's capture, a daemonised cron job) would then fail every event.
    """

    _lock = threading.Lock()  # one for the process: lines from many threads never interleave

    def __init__(self, *_args: Any) -> None:
        pass

    def msg(self, message: str) -> None:
        with self._lock:
            print(message, file=sys.stderr, flush=True)

    debug = info = warning = warn = error = critical = exception = fatal = log = msg


def _drop_below(level: str):
    threshold = logging.getLevelName(level.upper())

    def processor(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
        if logging.getLevelName(event.get("level", "info").upper()) < threshold:
            raise structlog.DropEvent
        return event

    return processor


def _drop_all(_logger: Any, _name: str, _event: dict[str, Any]) -> dict[str, Any]:
    raise structlog.DropEvent


def close_logging(stream: TextIO | None, *, level: str = "info") -> None:
    """Detach the run's events file (later events go to stderr only), then close it. A
    close that cannot flush (a full disk) loses only what the tee already said it lost."""
    configure_logging(None, level=level)
    if stream is not None:
        with contextlib.suppress(OSError, ValueError):
            stream.close()
