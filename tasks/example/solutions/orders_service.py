"""Orders service: create, price, pay, ship and cancel orders (ported from legacy/orders.py)."""

from __future__ import annotations

from typing import Any

from nimbus import Conflict, Invalid, NotFound, Service, handler

TAX_PERCENT = 8
SHIPPING_FEE = 799
FREE_SHIPPING_FROM = 10_000  # cents, after discount
MAX_LINES = 20
MAX_QTY = 100
# code -> (kind, amount, minimum subtotal in cents)
COUPONS = {
    "SAVE10": ("percent", 10, 5_000),
    "FLAT5": ("flat", 500, 2_000),
}
PENDING, PAID, SHIPPED, CANCELLED = "pending", "paid", "shipped", "cancelled"


def _key(order_id: str) -> str:
    return f"order:{order_id}"


def money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def _check_items(items: list[dict[str, Any]]) -> None:
    if not items:
        raise Invalid("order has no items", field="items")
    if len(items) > MAX_LINES:
        raise Invalid(f"too many lines (max {MAX_LINES})", field="items")
    seen: set[str] = set()
    for item in items:
        sku = item.get("sku")
        if not sku:
            raise Invalid("line without sku", field="items")
        if sku in seen:
            raise Invalid(f"duplicate sku {sku}", field="items")
        seen.add(sku)
        if not 1 <= item["qty"] <= MAX_QTY:
            raise Invalid(f"bad qty for {sku}", field="items")
        if item["unit_price"] <= 0:
            raise Invalid(f"bad price for {sku}", field="items")


def _discount(subtotal: int, coupon: str | None) -> int:
    if not coupon:
        return 0
    if coupon not in COUPONS:
        raise Invalid(f"unknown coupon {coupon}", field="coupon")
    kind, amount, minimum = COUPONS[coupon]
    if subtotal < minimum:
        return 0
    if kind == "percent":
        return subtotal * amount // 100
    return min(amount, subtotal)


def price(items: list[dict[str, Any]], coupon: str | None) -> dict[str, int]:
    """Subtotal, discount, tax (rounded half up), shipping and total, all in cents."""
    subtotal = sum(item["qty"] * item["unit_price"] for item in items)
    discount = _discount(subtotal, coupon)
    taxable = subtotal - discount
    tax = (taxable * TAX_PERCENT + 50) // 100
    shipping = 0 if taxable >= FREE_SHIPPING_FROM else SHIPPING_FEE
    return {
        "subtotal": subtotal,
        "discount": discount,
        "tax": tax,
        "shipping": shipping,
        "total": taxable + tax + shipping,
    }


class OrdersService(Service):
    """The order desk: every order's state lives in the store under order:<id>."""

    name = "orders"

    @handler("orders.create", status=201)
    def create(
        self, customer_id: str, items: list[dict[str, Any]], coupon: str | None = None
    ) -> dict[str, Any]:
        if not customer_id:
            raise Invalid("customer_id is required", field="customer_id")
        _check_items(items)
        totals = price(items, coupon)
        order_id = f"ord-{self.store.incr('orders:seq'):04d}"
        order = {
            "id": order_id,
            "customer_id": customer_id,
            "status": PENDING,
            "items": list(items),
            **totals,
            "created_at": self.clock.now().isoformat(),
        }
        self.store.put(_key(order_id), order)
        self.bus.publish(
            "order.created",
            {"order_id": order_id, "customer_id": customer_id, "total": order["total"]},
        )
        self.log.info("order_created", order_id=order_id, total=order["total"])
        return order

    @handler("orders.get")
    def get(self, order_id: str) -> dict[str, Any]:
        order = self.store.get(_key(order_id))
        if order is None:
            raise NotFound(f"no order {order_id}", field="order_id")
        return order

    @handler("orders.pay")
    def pay(self, order_id: str) -> dict[str, Any]:
        order = self._in_status(order_id, PENDING)
        order["status"] = PAID
        self.store.put(_key(order_id), order)
        self.bus.publish("order.paid", {"order_id": order_id, "amount": order["total"]})
        self.log.info("order_paid", order_id=order_id, amount=order["total"])
        return order

    @handler("orders.ship")
    def ship(self, order_id: str) -> dict[str, Any]:
        order = self._in_status(order_id, PAID)
        order["status"] = SHIPPED
        self.store.put(_key(order_id), order)
        self.log.info("order_shipped", order_id=order_id)
        return order

    @handler("orders.cancel")
    def cancel(self, order_id: str) -> dict[str, Any]:
        order = self.get(order_id)
        if order["status"] in (SHIPPED, CANCELLED):
            raise Conflict(f"order is {order['status']}", field="order_id")
        order["refund"] = order["total"] if order["status"] == PAID else 0
        order["status"] = CANCELLED
        self.store.put(_key(order_id), order)
        self.bus.publish("order.cancelled", {"order_id": order_id, "refund": order["refund"]})
        self.log.info("order_cancelled", order_id=order_id, refund=order["refund"])
        return order

    @handler("orders.receipt")
    def receipt(self, order_id: str) -> dict[str, Any]:
        order = self.get(order_id)
        count = sum(item["qty"] for item in order["items"])
        text = (
            f"Order {order_id} for {order['customer_id']}: "
            f"{count} item(s), total {money(order['total'])}"
        )
        return {"order_id": order_id, "text": text}

    def _in_status(self, order_id: str, status: str) -> dict[str, Any]:
        order = self.get(order_id)
        if order["status"] != status:
            raise Conflict(f"order is {order['status']}, expected {status}", field="order_id")
        return order


def create_service(**deps: Any) -> OrdersService:
    """The service on the given resources (store=, bus=, clock=); missing ones are fresh."""
    return OrdersService(**deps)
