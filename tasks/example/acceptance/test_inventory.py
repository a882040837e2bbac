"""Acceptance tests for the inventory service on nimbus (port of legacy/inventory.py)."""

from __future__ import annotations

import pytest

from nimbus import Conflict, Invalid, KeyValueStore, NotFound, Request
from inventory_service import create_service


@pytest.fixture
def bare(store, bus, clock):
    """The service on fresh resources, before any delivery."""
    return create_service(store=store, bus=bus, clock=clock)


@pytest.fixture
def svc(bare):
    """The service after a delivery of 40 x W-1."""
    bare.receive("W-1", 40)
    return bare


def test_receive_creates_and_grows_stock(svc):
    """Receiving a new sku creates its row; receiving again adds to it."""
    first = svc.receive("G-7", 12)
    second = svc.receive("G-7", 3)

    assert first == {"sku": "G-7", "on_hand": 12, "reserved": 0, "available": 12}
    assert second["on_hand"] == 15
    assert svc.level("G-7")["available"] == 15


@pytest.mark.parametrize("qty", [0, 1001])
def test_receipt_quantity_is_one_to_a_thousand(bare, qty):
    """One delivery brings 1 to 1000 units."""
    with pytest.raises(Invalid) as err:
        bare.receive("G-7", qty)

    assert err.value.field == "qty"


def test_shelf_space_is_ten_thousand_units(svc):
    """On-hand stock may reach exactly 10000 units, never more."""
    for _ in range(10):
        svc.receive("G-7", 1000)

    assert svc.level("G-7")["on_hand"] == 10000
    with pytest.raises(Conflict):
        svc.receive("G-7", 1)
    assert svc.level("G-7")["on_hand"] == 10000


def test_unknown_sku_is_not_found(bare):
    """Levels and holds of a sku never received are NotFound."""
    with pytest.raises(NotFound):
        bare.level("NOPE")
    with pytest.raises(NotFound):
        bare.reserve("o-1", "NOPE", 1)


def test_unknown_hold_is_not_found(bare):
    """Releasing or committing a hold that was never taken is NotFound."""
    with pytest.raises(NotFound):
        bare.release("hold-9999")
    with pytest.raises(NotFound):
        bare.commit("hold-9999")


def test_reserve_creates_a_hold_for_fifteen_minutes(svc):
    """A hold reserves units for an order and expires 15 minutes after it was taken."""
    hold = svc.reserve("o-1", "W-1", 10)

    assert hold["id"] == "hold-0001"
    assert (hold["order_id"], hold["sku"], hold["qty"], hold["status"]) == (
        "o-1",
        "W-1",
        10,
        "held",
    )
    assert hold["held_at"] == "2024-01-15T09:00:00+00:00"
    assert hold["expires_at"] == "2024-01-15T09:15:00+00:00"
    assert "stock_received" in svc.log.events()
    assert svc.log.events()[-1] == "stock_reserved"
    assert svc.level("W-1") == {"sku": "W-1", "on_hand": 40, "reserved": 10, "available": 30}


@pytest.mark.parametrize(("qty", "ok"), [(0, False), (1, True), (50, True), (51, False)])
def test_hold_quantity_is_one_to_fifty(svc, qty, ok):
    """One hold takes 1 to 50 units."""
    svc.receive("W-1", 20)
    if ok:
        assert svc.reserve("o-1", "W-1", qty)["qty"] == qty
    else:
        with pytest.raises(Invalid):
            svc.reserve("o-1", "W-1", qty)


def test_cannot_hold_more_than_available(svc):
    """A hold may take exactly what is available, not one unit more."""
    svc.reserve("o-1", "W-1", 30)

    with pytest.raises(Conflict) as err:
        svc.reserve("o-2", "W-1", 11)
    assert err.value.field == "qty"
    assert svc.reserve("o-2", "W-1", 10)["qty"] == 10
    assert svc.level("W-1")["available"] == 0


def test_one_live_hold_per_order_and_sku(svc):
    """An order holds a sku once at a time; other skus, and a new hold after release, are fine."""
    svc.receive("G-7", 10)
    first = svc.reserve("o-1", "W-1", 2)

    with pytest.raises(Conflict) as err:
        svc.reserve("o-1", "W-1", 3)
    assert err.value.field == "order_id"
    assert svc.reserve("o-1", "G-7", 3)["status"] == "held"
    svc.release(first["id"])
    assert svc.reserve("o-1", "W-1", 3)["id"] == "hold-0003"


def test_low_stock_is_announced_at_five_or_fewer(svc, bus):
    """Purchasing hears about a sku when a hold leaves 5 or fewer units available."""
    svc.reserve("o-1", "W-1", 34)
    assert bus.events("inventory.low_stock") == []

    svc.reserve("o-2", "W-1", 1)
    svc.reserve("o-3", "W-1", 2)

    assert bus.events("inventory.low_stock") == [
        {"sku": "W-1", "available": 5},
        {"sku": "W-1", "available": 3},
    ]
    assert "low_stock" in svc.log.events()


def test_release_returns_units(svc, bus):
    """Releasing a hold makes its units available again and announces it."""
    hold = svc.reserve("o-1", "W-1", 10)
    released = svc.release(hold["id"])

    assert released["status"] == "released"
    assert svc.level("W-1")["available"] == 40
    assert svc.log.events()[-1] == "hold_released"
    assert bus.events("inventory.released") == [
        {"hold_id": "hold-0001", "sku": "W-1", "qty": 10, "reason": "released"}
    ]


def test_commit_takes_units_off_the_shelf(svc):
    """Committing a hold removes its units from stock for good."""
    hold = svc.reserve("o-1", "W-1", 10)
    committed = svc.commit(hold["id"])

    assert committed["status"] == "committed"
    assert svc.level("W-1") == {"sku": "W-1", "on_hand": 30, "reserved": 0, "available": 30}
    assert svc.log.events()[-1] == "hold_committed"


def test_only_live_holds_are_released_or_committed(svc):
    """A released or committed hold can be neither released nor committed again."""
    released = svc.reserve("o-1", "W-1", 1)["id"]
    committed = svc.reserve("o-2", "W-1", 1)["id"]
    svc.release(released)
    svc.commit(committed)

    for hold_id in (released, committed):
        with pytest.raises(Conflict):
            svc.release(hold_id)
        with pytest.raises(Conflict):
            svc.commit(hold_id)


def test_commit_deadline_is_fifteen_minutes(svc, clock):
    """A hold commits at 14:59 after it was taken, but not at 15:00."""
    early = svc.reserve("o-1", "W-1", 1)["id"]
    late = svc.reserve("o-2", "W-1", 1)["id"]
    clock.advance(minutes=14, seconds=59)

    assert svc.commit(early)["status"] == "committed"
    clock.advance(seconds=1)
    with pytest.raises(Conflict):
        svc.commit(late)


def test_expire_releases_only_stale_holds(svc, clock, bus):
    """Sweeping expires holds 15 minutes old or more and returns their units."""
    svc.reserve("o-1", "W-1", 4)
    clock.advance(minutes=10)
    svc.reserve("o-2", "W-1", 6)
    clock.advance(minutes=5)

    assert svc.expire_holds() == {"expired": ["hold-0001"]}
    assert svc.level("W-1")["reserved"] == 6
    assert bus.events("inventory.released")[-1]["reason"] == "expired"
    assert svc.expire_holds() == {"expired": []}


def test_state_lives_in_the_store(store, bus, clock):
    """Two services on one store share stock and holds; a fresh store has neither."""
    first = create_service(store=store, bus=bus, clock=clock)
    first.receive("W-1", 5)
    hold_id = first.reserve("o-1", "W-1", 2)["id"]
    second = create_service(store=store, bus=bus, clock=clock)

    assert second.level("W-1")["available"] == 3
    assert second.commit(hold_id)["status"] == "committed"
    with pytest.raises(NotFound):
        create_service(store=KeyValueStore(), bus=bus, clock=clock).level("W-1")


def test_requests_map_to_status_codes(svc):
    """handle() answers 201 for a new hold, 400 / 404 / 409 for the typed errors."""
    held = svc.handle(Request("inventory.reserve", {"order_id": "o-1", "sku": "W-1", "qty": 5}))
    level = svc.handle(Request("inventory.level", {"sku": "W-1"}))
    too_many = svc.handle(
        Request("inventory.reserve", {"order_id": "o-2", "sku": "W-1", "qty": 36})
    )
    bad = svc.handle(Request("inventory.receive", {"sku": "W-1", "qty": 0}))
    missing = svc.handle(Request("inventory.commit", {"hold_id": "hold-9999"}))

    assert (held.status, held.body["id"]) == (201, "hold-0001")
    assert (level.status, level.body["available"]) == (200, 35)
    assert (too_many.status, too_many.body["error"]) == (409, "conflict")
    assert (bad.status, bad.body["field"]) == (400, "qty")
    assert missing.status == 404


def test_routes(bare):
    """The service answers the legacy actions as inventory.<action> routes."""
    expected = {"level", "receive", "reserve", "release", "commit", "expire"}

    assert set(bare.routes) == {f"inventory.{action}" for action in expected}
