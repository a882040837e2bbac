"""Inventory service: stock levels and order holds (ported from legacy/inventory.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from nimbus import Conflict, Invalid, NotFound, Service, handler

MAX_ON_HAND = 10_000  # shelf space per sku
MAX_RECEIPT = 1_000  # units per delivery
MAX_PER_HOLD = 50
LOW_STOCK_AT = 5  # purchasing hears about it when available drops to this or below
HOLD_FOR = timedelta(minutes=15)
HELD, RELEASED, EXPIRED, COMMITTED = "held", "released", "expired", "committed"


def _stock_key(sku: str) -> str:
    return f"stock:{sku}"


def _hold_key(hold_id: str) -> str:
    return f"hold:{hold_id}"


def _check_qty(qty: int, limit: int) -> None:
    if not 1 <= qty <= limit:
        raise Invalid(f"qty must be 1..{limit}", field="qty")


def _level(sku: str, row: dict[str, int]) -> dict[str, Any]:
    return {
        "sku": sku,
        "on_hand": row["on_hand"],
        "reserved": row["reserved"],
        "available": row["on_hand"] - row["reserved"],
    }


class InventoryService(Service):
    """Stock rows live under stock:<sku>, holds under hold:<id>."""

    name = "inventory"

    @handler("inventory.level")
    def level(self, sku: str) -> dict[str, Any]:
        return _level(sku, self._row(sku))

    @handler("inventory.receive")
    def receive(self, sku: str, qty: int) -> dict[str, Any]:
        _check_qty(qty, MAX_RECEIPT)
        row = self.store.get(_stock_key(sku), {"on_hand": 0, "reserved": 0})
        if row["on_hand"] + qty > MAX_ON_HAND:
            raise Conflict(f"no shelf space for {qty} more {sku}", field="qty")
        row["on_hand"] += qty
        self.store.put(_stock_key(sku), row)
        self.log.info("stock_received", sku=sku, qty=qty, on_hand=row["on_hand"])
        return _level(sku, row)

    @handler("inventory.reserve", status=201)
    def reserve(self, order_id: str, sku: str, qty: int) -> dict[str, Any]:
        _check_qty(qty, MAX_PER_HOLD)
        row = self._row(sku)
        available = row["on_hand"] - row["reserved"]
        if any(
            h["order_id"] == order_id and h["sku"] == sku and h["status"] == HELD
            for h in self._holds()
        ):
            raise Conflict(f"order {order_id} already holds {sku}", field="order_id")
        if qty > available:
            raise Conflict(f"only {available} {sku} available", field="qty")
        row["reserved"] += qty
        self.store.put(_stock_key(sku), row)
        now = self.clock.now()
        hold_id = f"hold-{self.store.incr('holds:seq'):04d}"
        hold = {
            "id": hold_id,
            "order_id": order_id,
            "sku": sku,
            "qty": qty,
            "status": HELD,
            "held_at": now.isoformat(),
            "expires_at": (now + HOLD_FOR).isoformat(),
        }
        self.store.put(_hold_key(hold_id), hold)
        self.log.info("stock_reserved", hold_id=hold_id, sku=sku, qty=qty)
        if available - qty <= LOW_STOCK_AT:
            self.log.warning("low_stock", sku=sku, available=available - qty)
            self.bus.publish("inventory.low_stock", {"sku": sku, "available": available - qty})
        return hold

    @handler("inventory.release")
    def release(self, hold_id: str) -> dict[str, Any]:
        return self._let_go(self._held(hold_id), RELEASED)

    @handler("inventory.commit")
    def commit(self, hold_id: str) -> dict[str, Any]:
        hold = self._held(hold_id)
        if self._expired(hold):
            raise Conflict(f"hold {hold_id} expired", field="hold_id")
        row = self._row(hold["sku"])
        row["on_hand"] -= hold["qty"]
        row["reserved"] -= hold["qty"]
        self.store.put(_stock_key(hold["sku"]), row)
        hold["status"] = COMMITTED
        self.store.put(_hold_key(hold_id), hold)
        self.log.info("hold_committed", hold_id=hold_id)
        return hold

    @handler("inventory.expire")
    def expire_holds(self) -> dict[str, Any]:
        expired = [
            self._let_go(hold, EXPIRED)["id"]
            for hold in self._holds()
            if hold["status"] == HELD and self._expired(hold)
        ]
        return {"expired": expired}

    def _row(self, sku: str) -> dict[str, int]:
        row = self.store.get(_stock_key(sku))
        if row is None:
            raise NotFound(f"no stock for sku {sku}", field="sku")
        return row

    def _holds(self) -> list[dict[str, Any]]:
        return [self.store.get(key) for key in self.store.keys("hold:")]

    def _held(self, hold_id: str) -> dict[str, Any]:
        hold = self.store.get(_hold_key(hold_id))
        if hold is None:
            raise NotFound(f"no hold {hold_id}", field="hold_id")
        if hold["status"] != HELD:
            raise Conflict(f"hold {hold_id} is {hold['status']}", field="hold_id")
        return hold

    def _expired(self, hold: dict[str, Any]) -> bool:
        return self.clock.now() >= datetime.fromisoformat(hold["expires_at"])

    def _let_go(self, hold: dict[str, Any], status: str) -> dict[str, Any]:
        row = self._row(hold["sku"])
        row["reserved"] -= hold["qty"]
        self.store.put(_stock_key(hold["sku"]), row)
        hold["status"] = status
        self.store.put(_hold_key(hold["id"]), hold)
        self.bus.publish(
            "inventory.released",
            {"hold_id": hold["id"], "sku": hold["sku"], "qty": hold["qty"], "reason": status},
        )
        self.log.info("hold_released", hold_id=hold["id"], reason=status)
        return hold


def create_service(**deps: Any) -> InventoryService:
    """The service on the given resources (store=, bus=, clock=); missing ones are fresh."""
    return InventoryService(**deps)
