"""Acceptance tests for the orders service on nimbus (port of legacy/orders.py)."""

from __future__ import annotations

import pytest

from nimbus import Conflict, Invalid, KeyValueStore, NotFound, Request, Service
from orders_service import create_service


def line(sku: str, qty: int, unit_price: int) -> dict:
    return {"sku": sku, "qty": qty, "unit_price": unit_price}


@pytest.fixture
def svc(store, bus, clock):
    return create_service(store=store, bus=bus, clock=clock)


def test_create_prices_a_pending_order(svc):
    """A new order is pending, gets the first id, and carries its price breakdown in cents."""
    order = svc.create("c-42", [line("A", 2, 1000), line("B", 1, 550)])

    assert isinstance(svc, Service)
    assert order["id"] == "ord-0001"
    assert order["status"] == "pending"
    assert order["customer_id"] == "c-42"
    assert order["created_at"] == "2024-01-15T09:00:00+00:00"
    assert (order["subtotal"], order["discount"], order["tax"]) == (2550, 0, 204)
    assert (order["shipping"], order["total"]) == (799, 3553)


@pytest.mark.parametrize(("unit_price", "tax"), [(1999, 160), (1006, 80), (1250, 100)])
def test_tax_is_eight_percent_rounded_half_up(svc, unit_price, tax):
    """Tax is 8% of the discounted subtotal, rounded to the nearest cent."""
    order = svc.create("c-1", [line("A", 1, unit_price)])

    assert order["tax"] == tax
    assert order["total"] == unit_price + tax + 799


@pytest.mark.parametrize(("subtotal", "shipping"), [(10000, 0), (9999, 799)])
def test_shipping_is_free_from_one_hundred_dollars(svc, subtotal, shipping):
    """Shipping is free when the discounted subtotal is at least $100.00, else $7.99."""
    order = svc.create("c-1", [line("A", 1, subtotal)])

    assert order["shipping"] == shipping


def test_percent_coupon_applies_from_its_minimum(svc):
    """SAVE10 takes 10% off a subtotal of exactly $50.00."""
    order = svc.create("c-1", [line("A", 5, 1000)], coupon="SAVE10")

    assert (order["discount"], order["tax"], order["shipping"]) == (500, 360, 799)
    assert order["total"] == 5659


def test_percent_coupon_below_minimum_gives_nothing(svc):
    """SAVE10 on $49.99 gives no discount (but is not an error)."""
    order = svc.create("c-1", [line("A", 1, 4999)], coupon="SAVE10")

    assert order["discount"] == 0
    assert order["total"] == 4999 + 400 + 799


def test_percent_discount_rounds_down(svc):
    """10% of 5555 cents is 555 cents, not 556."""
    order = svc.create("c-1", [line("A", 1, 5555)], coupon="SAVE10")

    assert order["discount"] == 555
    assert order["tax"] == 400


def test_flat_coupon_takes_five_dollars_from_twenty(svc):
    """FLAT5 takes $5.00 off from a $20.00 subtotal, and nothing below it."""
    at_minimum = svc.create("c-1", [line("A", 1, 2000)], coupon="FLAT5")
    below = svc.create("c-1", [line("A", 1, 1999)], coupon="FLAT5")

    assert (at_minimum["discount"], at_minimum["total"]) == (500, 1500 + 120 + 799)
    assert below["discount"] == 0


def test_discount_can_lose_free_shipping(svc):
    """Free shipping is judged after the discount: $110.00 less 10% pays shipping."""
    order = svc.create("c-1", [line("A", 2, 5500)], coupon="SAVE10")

    assert (order["discount"], order["tax"], order["shipping"]) == (1100, 792, 799)
    assert order["total"] == 11491


def test_unknown_coupon_is_invalid(svc):
    """Coupon codes match exactly; an unknown one is rejected on the coupon field."""
    with pytest.raises(Invalid) as err:
        svc.create("c-1", [line("A", 1, 9000)], coupon="save10")

    assert err.value.field == "coupon"


@pytest.mark.parametrize("qty", [0, 101])
def test_quantity_outside_one_to_one_hundred_is_invalid(svc, qty):
    """Each line's quantity must be between 1 and 100."""
    with pytest.raises(Invalid) as err:
        svc.create("c-1", [line("A", qty, 100)])

    assert err.value.field == "items"


def test_quantity_of_one_hundred_is_accepted(svc):
    """100 units on one line is the maximum, and allowed."""
    order = svc.create("c-1", [line("A", 100, 1)])

    assert order["subtotal"] == 100


def test_line_count_limits(svc):
    """An order needs 1 to 20 lines."""
    twenty = [line(f"S{i}", 1, 100) for i in range(20)]

    assert svc.create("c-1", twenty)["subtotal"] == 2000
    with pytest.raises(Invalid) as too_many:
        svc.create("c-1", [*twenty, line("S20", 1, 100)])
    with pytest.raises(Invalid) as empty:
        svc.create("c-1", [])
    assert (too_many.value.field, empty.value.field) == ("items", "items")


def test_bad_lines_are_invalid(svc):
    """Duplicate skus, lines without a sku, free items and a missing customer are rejected."""
    with pytest.raises(Invalid) as duplicate:
        svc.create("c-1", [line("A", 1, 100), line("A", 2, 100)])
    with pytest.raises(Invalid):
        svc.create("c-1", [line("", 1, 100)])
    with pytest.raises(Invalid):
        svc.create("c-1", [line("A", 1, 0)])
    assert duplicate.value.field == "items"
    with pytest.raises(Invalid) as err:
        svc.create("", [line("A", 1, 100)])
    assert err.value.field == "customer_id"


def test_created_order_is_announced_and_logged(svc, bus):
    """Creating an order publishes order.created and logs order_created."""
    svc.create("c-42", [line("A", 2, 1000), line("B", 1, 550)])

    assert bus.events("order.created") == [
        {"order_id": "ord-0001", "customer_id": "c-42", "total": 3553}
    ]
    assert "order_created" in svc.log.events()


def test_pay_then_ship(svc, bus):
    """A pending order is paid (publishing order.paid), then shipped."""
    order_id = svc.create("c-1", [line("A", 1, 2000)])["id"]

    assert svc.pay(order_id)["status"] == "paid"
    assert svc.get(order_id)["status"] == "paid"
    assert bus.events("order.paid") == [{"order_id": order_id, "amount": 2959}]
    assert svc.ship(order_id)["status"] == "shipped"
    assert svc.get(order_id)["status"] == "shipped"
    assert svc.log.events()[-2:] == ["order_paid", "order_shipped"]


def test_wrong_state_transitions_conflict(svc):
    """Only pending orders are paid and only paid orders are shipped."""
    order_id = svc.create("c-1", [line("A", 1, 2000)])["id"]

    with pytest.raises(Conflict) as err:
        svc.ship(order_id)
    assert err.value.field == "order_id"
    svc.pay(order_id)
    with pytest.raises(Conflict):
        svc.pay(order_id)


def test_cancel_refunds_paid_orders_only(svc, bus):
    """Cancelling a paid order refunds its total; a pending one refunds nothing."""
    paid = svc.create("c-1", [line("A", 1, 2000)])["id"]
    pending = svc.create("c-1", [line("B", 1, 3000)])["id"]
    svc.pay(paid)

    assert svc.cancel(paid)["refund"] == 2959
    assert svc.cancel(pending)["refund"] == 0
    assert svc.get(pending)["status"] == "cancelled"
    assert bus.events("order.cancelled") == [
        {"order_id": paid, "refund": 2959},
        {"order_id": pending, "refund": 0},
    ]
    assert svc.log.events().count("order_cancelled") == 2


def test_shipped_or_cancelled_orders_cannot_be_cancelled(svc):
    """Cancelling a shipped or already cancelled order is a conflict."""
    shipped = svc.create("c-1", [line("A", 1, 2000)])["id"]
    svc.pay(shipped)
    svc.ship(shipped)
    cancelled = svc.create("c-1", [line("A", 1, 2000)])["id"]
    svc.cancel(cancelled)

    with pytest.raises(Conflict):
        svc.cancel(shipped)
    with pytest.raises(Conflict):
        svc.cancel(cancelled)


def test_unknown_order_is_not_found(svc):
    """Every operation on an unknown id raises NotFound."""
    for operation in (svc.get, svc.pay, svc.ship, svc.cancel, svc.receipt):
        with pytest.raises(NotFound):
            operation("ord-9999")


def test_receipt_text(svc):
    """The receipt counts units and formats the total as dollars and two-digit cents."""
    order_id = svc.create("c-42", [line("A", 2, 1000), line("B", 1, 550)])["id"]
    round_id = svc.create("c-7", [line("A", 1, 10000)])["id"]

    assert svc.receipt(order_id) == {
        "order_id": "ord-0001",
        "text": "Order ord-0001 for c-42: 3 item(s), total $35.53",
    }
    assert svc.receipt(round_id)["text"] == "Order ord-0002 for c-7: 1 item(s), total $108.00"


def test_state_lives_in_the_store(store, bus, clock):
    """Two services on one store share orders and ids; a fresh store knows none of them."""
    first = create_service(store=store, bus=bus, clock=clock)
    order_id = first.create("c-1", [line("A", 1, 2000)])["id"]
    second = create_service(store=store, bus=bus, clock=clock)

    assert second.get(order_id)["total"] == 2959
    assert second.create("c-1", [line("A", 1, 2000)])["id"] == "ord-0002"
    with pytest.raises(NotFound):
        create_service(store=KeyValueStore(), bus=bus, clock=clock).get(order_id)


def test_requests_map_to_status_codes(svc):
    """handle() answers 201 on create, and 400 / 404 / 409 for the typed errors."""
    created = svc.handle(
        Request("orders.create", {"customer_id": "c-1", "items": [line("A", 1, 2000)]})
    )
    bad = svc.handle(
        Request("orders.create", {"customer_id": "c-1", "items": [line("A", 0, 2000)]})
    )
    missing = svc.handle(Request("orders.get", {"order_id": "ord-9999"}))
    too_early = svc.handle(Request("orders.ship", {"order_id": "ord-0001"}))
    paid = svc.handle(Request("orders.pay", {"order_id": "ord-0001"}))

    assert (created.status, created.body["id"]) == (201, "ord-0001")
    assert (paid.status, paid.body["status"]) == (200, "paid")
    assert (bad.status, bad.body["error"], bad.body["field"]) == (400, "invalid", "items")
    assert (missing.status, missing.body["error"]) == (404, "not_found")
    assert too_early.status == 409


def test_routes(svc):
    """The service answers exactly the legacy actions, as orders.<action> routes."""
    expected = {"create", "get", "pay", "ship", "cancel", "receipt"}

    assert set(svc.routes) == {f"orders.{action}" for action in expected}
