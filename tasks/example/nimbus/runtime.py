"""The platform's resources: clock, key-value store, event bus and structured logger."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partialmethod
from typing import Any, Protocol

__all__ = [
    "Clock",
    "Event",
    "EventBus",
    "FixedClock",
    "KeyValueStore",
    "LogRecord",
    "Logger",
    "SystemClock",
    "get_logger",
]


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """Wall-clock time, timezone-aware UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told to: what tests and replays use."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("FixedClock needs a timezone-aware datetime")
        self._now = start

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now


class KeyValueStore:
    """In-memory store. Values are copied in and out, as if serialised: mutate, then put."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return copy.deepcopy(self._data.get(key, default))

    def put(self, key: str, value: Any) -> None:
        self._data[key] = copy.deepcopy(value)

    def delete(self, key: str) -> bool:
        return self._data.pop(key, _MISSING) is not _MISSING

    def keys(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self._data if k.startswith(prefix))

    def incr(self, key: str, by: int = 1) -> int:
        self._data[key] = int(self._data.get(key, 0)) + by
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data


_MISSING = object()


@dataclass(frozen=True)
class Event:
    topic: str
    payload: dict[str, Any]


class EventBus:
    """Synchronous publish/subscribe that also records every published event, in order."""

    def __init__(self) -> None:
        self.published: list[Event] = []
        self._subscribers: dict[str, list[Callable[[Event], None]]] = {}

    def subscribe(self, topic: str, callback: Callable[[Event], None]) -> None:
        self._subscribers.setdefault(topic, []).append(callback)

    def publish(self, topic: str, payload: Mapping[str, Any] | None = None) -> Event:
        event = Event(topic, copy.deepcopy(dict(payload or {})))
        self.published.append(event)
        for callback in self._subscribers.get(topic, []):
            callback(event)
        return event

    def events(self, topic: str) -> list[dict[str, Any]]:
        """The payloads published on `topic`, oldest first."""
        return [e.payload for e in self.published if e.topic == topic]


@dataclass(frozen=True)
class LogRecord:
    level: str
    event: str
    fields: dict[str, Any] = field(default_factory=dict)


class Logger:
    """Structured logger: event name plus fields, kept in `records` and sent to stdlib logging."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.records: list[LogRecord] = []
        self._stdlib = logging.getLogger(f"nimbus.{name}")

    def _log(self, level: str, event: str, **fields: Any) -> None:
        self.records.append(LogRecord(level, event, fields))
        self._stdlib.log(logging.getLevelName(level.upper()), "%s %s", event, fields)

    debug = partialmethod(_log, "debug")
    info = partialmethod(_log, "info")
    warning = partialmethod(_log, "warning")
    error = partialmethod(_log, "error")

    def events(self) -> list[str]:
        """The event names logged so far, oldest first."""
        return [r.event for r in self.records]


def get_logger(name: str) -> Logger:
    """A fresh logger for `name`: never shared, so records never leak between services."""
    return Logger(name)
