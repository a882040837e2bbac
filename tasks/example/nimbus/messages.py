"""Request and Response: what crosses the service boundary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Request", "Response"]


@dataclass(frozen=True)
class Request:
    """A call to `route` (e.g. "orders.create"); `body` becomes the handler's keyword arguments."""

    route: str
    body: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    """An HTTP-like answer: `status` (200, 201, 400, 404, 409, 429, ...) and a JSON-like body."""

    status: int
    body: Any = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300
