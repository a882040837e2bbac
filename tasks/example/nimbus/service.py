"""Service base class and the @handler decorator that registers its routes."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from nimbus.errors import Invalid, NimbusError, NotFound
from nimbus.messages import Request, Response
from nimbus.runtime import Clock, EventBus, KeyValueStore, SystemClock, get_logger

__all__ = ["Service", "handler"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class _Route:
    attr: str
    status: int


def handler(route: str, *, status: int = 200) -> Callable[[F], F]:
    """Register a Service method as the handler of `route`, answering `status` on success."""

    def register(method: F) -> F:
        method.__nimbus_route__ = (route, status)  # type: ignore[attr-defined]
        return method

    return register


class Service:
    """Base of every service: owns its store, bus, clock and logger, and dispatches requests."""

    name: ClassVar[str] = "service"
    routes: ClassVar[dict[str, _Route]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        routes = dict(cls.routes)
        for attr, value in vars(cls).items():
            tag = getattr(value, "__nimbus_route__", None)
            if tag is not None:
                routes[tag[0]] = _Route(attr, tag[1])
        cls.routes = routes

    def __init__(
        self,
        *,
        store: KeyValueStore | None = None,
        bus: EventBus | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store if store is not None else KeyValueStore()
        self.bus = bus if bus is not None else EventBus()
        self.clock = clock if clock is not None else SystemClock()
        self.log = get_logger(self.name)

    def handle(self, request: Request) -> Response:
        """Call the route's handler with the body as keyword arguments; errors become responses."""
        route = self.routes.get(request.route)
        if route is None:
            return _error(NotFound(f"no handler for route {request.route!r}"))
        method = getattr(self, route.attr)
        try:
            inspect.signature(method).bind(**request.body)
        except TypeError as exc:
            return _error(Invalid(f"bad arguments for {request.route}: {exc}"))
        try:
            result = method(**request.body)
        except NimbusError as exc:
            self.log.warning("request_rejected", route=request.route, error=exc.code)
            return _error(exc)
        if isinstance(result, Response):
            return result
        return Response(route.status, result)


def _error(exc: NimbusError) -> Response:
    body = {"error": exc.code, "message": exc.message}
    if exc.field is not None:
        body["field"] = exc.field
    return Response(exc.status, body)
