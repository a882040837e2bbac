"""Typed errors a handler raises on purpose; Service.handle maps each to a status code."""

from __future__ import annotations

__all__ = ["Conflict", "Invalid", "NimbusError", "NotFound"]


class NimbusError(Exception):
    """Base of every expected failure; `field` names the offending input, if any."""

    status = 500
    code = "internal"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class Invalid(NimbusError):
    """The input is malformed or breaks a rule about its own values."""

    status = 400
    code = "invalid"


class NotFound(NimbusError):
    """The thing the request names does not exist."""

    status = 404
    code = "not_found"


class Conflict(NimbusError):
    """The input is valid but clashes with the current state."""

    status = 409
    code = "conflict"
