"""Support module of the boundary hostile task: on both sides of the boundary."""

from __future__ import annotations

from dataclasses import dataclass


class PriceError(ValueError):
    """An item the shop does not sell, or a quantity it cannot price."""


@dataclass(frozen=True)
class Quote:
    """A support record: crosses by value."""

    sku: str
    cents: int


class Ledger:
    """A support object: crosses as a handle, so the tests see what the candidate wrote."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, int]] = []

    def record(self, sku: str, cents: int) -> None:
        self.entries.append((sku, cents))


class Shop:
    """A support base class the candidate's shop subclasses."""

    def name(self) -> str:
        return "shop"
