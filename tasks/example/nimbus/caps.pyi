"""Capabilities of the nimbus platform: everything a ported service may use.

Import from the package root: `from nimbus import Service, handler, Invalid, ...`.
House rules for a ported service:
- State lives in `self.store` (KeyValueStore), never in module-level globals; values are
  copied in and out, so after changing a loaded dict, `put` it back.
- Time comes from `self.clock.now()` (timezone-aware UTC), never from `time` or `datetime.now`.
- Logs go to `self.log` as an event name plus fields, never `print`.
- Facts other services care about are published on `self.bus`.
- Expected failures raise `Invalid`, `NotFound` or `Conflict`, never bare `Exception`;
  `Service.handle` turns them into 400 / 404 / 409 responses.
- A module exposes `create_service(**deps)` returning its Service subclass instance.

The acceptance tests build a service as `create_service(store=KeyValueStore(),
bus=EventBus(), clock=FixedClock(datetime(2024, 1, 15, 9, 0, tzinfo=UTC)))` (fixtures
`store`, `bus`, `clock`), then call its methods directly and through `handle(Request(...))`.
"""

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, ClassVar, Protocol, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# --- errors ---------------------------------------------------------------------------

class NimbusError(Exception):
    """Base of every expected failure. `field` names the offending input, if any."""

    status: ClassVar[int]  # 500
    code: ClassVar[str]  # "internal"
    message: str
    field: str | None
    def __init__(self, message: str, *, field: str | None = None) -> None: ...

class Invalid(NimbusError):
    """Malformed input or a broken rule about the input's own values. status 400, code "invalid"."""

class NotFound(NimbusError):
    """The named thing does not exist. status 404, code "not_found"."""

class Conflict(NimbusError):
    """Valid input that clashes with current state (wrong status, duplicate, not enough stock).
    status 409, code "conflict"."""

# --- messages -------------------------------------------------------------------------

class Request:
    """A call to `route` (e.g. "orders.create"); `body` is passed to the handler as kwargs."""

    route: str
    body: Mapping[str, Any]
    def __init__(self, route: str, body: Mapping[str, Any] = ...) -> None: ...

class Response:
    """HTTP-like answer. A handler may return one to choose its own status (e.g. 429)."""

    status: int
    body: Any
    def __init__(self, status: int, body: Any = None) -> None: ...
    @property
    def ok(self) -> bool:
        """True for 2xx."""

# --- resources ------------------------------------------------------------------------

class Clock(Protocol):
    def now(self) -> datetime:
        """Current time, timezone-aware UTC."""

class SystemClock:
    def now(self) -> datetime: ...

class FixedClock:
    """Test clock: starts at `start`, moves only on advance(seconds=, minutes=, days=...)."""

    def __init__(self, start: datetime) -> None: ...
    def now(self) -> datetime: ...
    def advance(self, **delta: float) -> datetime: ...

class KeyValueStore:
    """In-memory key-value store shared by every service built on it."""

    def get(self, key: str, default: Any = None) -> Any:
        """A copy of the stored value, or `default`."""
    def put(self, key: str, value: Any) -> None:
        """Store a copy of `value` (JSON-like data: dicts, lists, str, int, bool, None)."""
    def delete(self, key: str) -> bool:
        """Remove `key`; True if it existed."""
    def keys(self, prefix: str = "") -> list[str]:
        """Keys starting with `prefix`, sorted."""
    def incr(self, key: str, by: int = 1) -> int:
        """Add `by` to the integer at `key` (missing = 0) and return the new value: use for ids."""
    def __contains__(self, key: object) -> bool: ...

class Event:
    topic: str
    payload: dict[str, Any]

class EventBus:
    """Synchronous publish/subscribe; `published` records every event in order."""

    published: list[Event]
    def publish(self, topic: str, payload: Mapping[str, Any] | None = None) -> Event:
        """Record the event and call the topic's subscribers, in subscription order."""
    def subscribe(self, topic: str, callback: Callable[[Event], None]) -> None: ...
    def events(self, topic: str) -> list[dict[str, Any]]:
        """Payloads published on `topic`, oldest first."""

class LogRecord:
    level: str  # "debug" | "info" | "warning" | "error"
    event: str
    fields: dict[str, Any]

class Logger:
    """Structured logger: `log.info("order_created", order_id=...)`; event names are snake_case."""

    name: str
    records: list[LogRecord]
    def debug(self, event: str, **fields: Any) -> None: ...
    def info(self, event: str, **fields: Any) -> None: ...
    def warning(self, event: str, **fields: Any) -> None: ...
    def error(self, event: str, **fields: Any) -> None: ...
    def events(self) -> list[str]:
        """Event names logged so far, oldest first."""

def get_logger(name: str) -> Logger:
    """A fresh logger for `name`. Services get one as `self.log`."""

# --- services -------------------------------------------------------------------------

def handler(route: str, *, status: int = 200) -> Callable[[F], F]:
    """Register a Service method as the handler of `route`. `Service.handle` calls it with the
    request body as keyword arguments and wraps its return value in Response(status, value),
    unless it returns a Response itself."""

class Service:
    """Base class of every service. Subclasses set `name` and decorate methods with @handler.

    Methods are also called directly (`svc.create(...)`): they return plain data or raise
    NimbusError subclasses.
    """

    name: ClassVar[str]
    routes: ClassVar[dict[str, Any]]
    store: KeyValueStore
    bus: EventBus
    clock: Clock
    log: Logger
    def __init__(
        self,
        *,
        store: KeyValueStore | None = None,
        bus: EventBus | None = None,
        clock: Clock | None = None,
    ) -> None:
        """Missing resources default to a fresh store, a fresh bus and the system clock."""
    def handle(self, request: Request) -> Response:
        """Dispatch to the route's handler. Unknown route: 404. Body not matching the handler's
        parameters: 400. NimbusError raised: its status, body {"error": code, "message": ...,
        "field": ... (if set)}, and a `request_rejected` warning is logged."""
