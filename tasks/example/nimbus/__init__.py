"""nimbus: the target platform of the example task list (a tiny, deterministic stand-in)."""

from __future__ import annotations

from nimbus.errors import Conflict, Invalid, NimbusError, NotFound
from nimbus.messages import Request, Response
from nimbus.runtime import (
    Clock,
    Event,
    EventBus,
    FixedClock,
    KeyValueStore,
    Logger,
    LogRecord,
    SystemClock,
    get_logger,
)
from nimbus.service import Service, handler

__all__ = [
    "Clock",
    "Conflict",
    "Event",
    "EventBus",
    "FixedClock",
    "Invalid",
    "KeyValueStore",
    "LogRecord",
    "Logger",
    "NimbusError",
    "NotFound",
    "Request",
    "Response",
    "Service",
    "SystemClock",
    "get_logger",
    "handler",
]
