"""Acceptance tests for the rate limiter service on nimbus (port of legacy/rate_limiter.py)."""

from __future__ import annotations

import pytest

from nimbus import Invalid, KeyValueStore, Request
from rate_limiter_service import create_service


@pytest.fixture
def svc(store, bus, clock):
    return create_service(store=store, bus=bus, clock=clock)


def use(svc, client_id: str, times: int) -> None:
    for _ in range(times):
        assert svc.check(client_id)["allowed"]


def test_first_request_is_allowed(svc):
    """A new client is on the free plan: 10 requests a minute."""
    assert svc.check("c-1") == {"allowed": True, "remaining": 9, "retry_after": 0, "limit": 10}


def test_free_plan_allows_ten_then_denies(svc):
    """The tenth request leaves 0 remaining; the eleventh waits for the next minute."""
    use(svc, "c-1", 9)

    assert svc.check("c-1")["remaining"] == 0
    assert svc.check("c-1") == {"allowed": False, "remaining": 0, "retry_after": 60, "limit": 10}


@pytest.mark.parametrize(("elapsed", "retry_after"), [(30.25, 30), (59.5, 1), (45, 15)])
def test_retry_after_rounds_up_to_whole_seconds(svc, clock, elapsed, retry_after):
    """retry_after is the seconds left in the window, rounded up."""
    use(svc, "c-1", 10)
    clock.advance(seconds=elapsed)

    assert svc.check("c-1")["retry_after"] == retry_after


def test_next_window_starts_fresh(svc, clock):
    """At the next minute the count starts again."""
    use(svc, "c-1", 10)
    clock.advance(seconds=60)

    assert svc.check("c-1")["remaining"] == 9


def test_windows_follow_the_clock_minute(svc, clock):
    """Windows are aligned to the minute, not to the client's first request."""
    clock.advance(seconds=50)
    use(svc, "c-1", 10)
    clock.advance(seconds=10)

    assert svc.check("c-1")["allowed"] is True


def test_cost_counts_as_several_requests(svc):
    """A request of cost 3 uses 3 of the quota, one of cost 7 the rest."""
    assert svc.check("c-1", cost=3)["remaining"] == 7
    assert svc.check("c-1", cost=7)["remaining"] == 0


@pytest.mark.parametrize("cost", [0, 11])
def test_cost_outside_one_to_ten_is_invalid(svc, cost):
    """A single request counts as 1 to 10 requests."""
    with pytest.raises(Invalid) as err:
        svc.check("c-1", cost=cost)

    assert err.value.field == "cost"


def test_denied_request_uses_nothing(svc):
    """A request that does not fit is refused whole and leaves the quota as it was."""
    use(svc, "c-1", 8)

    assert svc.check("c-1", cost=3) == {
        "allowed": False,
        "remaining": 2,
        "retry_after": 60,
        "limit": 10,
    }
    assert svc.check("c-1", cost=2)["remaining"] == 0


def test_pro_plan_allows_a_hundred(svc):
    """A pro client gets 100 requests a minute; other clients keep the free plan."""
    assert svc.set_plan("c-1", "pro") == {"client_id": "c-1", "plan": "pro"}
    use(svc, "c-1", 99)

    assert svc.check("c-1") == {"allowed": True, "remaining": 0, "retry_after": 0, "limit": 100}
    assert svc.check("c-1")["allowed"] is False
    assert svc.check("c-2")["limit"] == 10
    assert "plan_changed" in svc.log.events()


def test_internal_plan_is_unlimited(svc):
    """Internal clients are never limited and have no remaining count."""
    svc.set_plan("svc-billing", "internal")
    use(svc, "svc-billing", 150)

    assert svc.check("svc-billing", cost=10) == {
        "allowed": True,
        "remaining": None,
        "retry_after": 0,
        "limit": None,
    }


def test_unknown_plan_is_invalid(svc):
    """Only free, pro and internal exist."""
    with pytest.raises(Invalid) as err:
        svc.set_plan("c-1", "gold")

    assert err.value.field == "plan"


def test_clients_are_counted_separately(svc):
    """One client's usage never touches another's quota."""
    use(svc, "c-1", 10)

    assert svc.check("c-2")["remaining"] == 9
    assert svc.check("c-1")["allowed"] is False


def test_exceeding_is_announced_once_per_window(svc, bus, clock):
    """The first refusal in a window publishes ratelimit.exceeded and logs rate_limited."""
    use(svc, "c-1", 10)
    svc.check("c-1")
    svc.check("c-1")
    clock.advance(minutes=1)
    use(svc, "c-1", 10)
    svc.check("c-1")

    expected = {"client_id": "c-1", "plan": "free", "limit": 10}
    assert bus.events("ratelimit.exceeded") == [expected, expected]
    assert svc.log.events().count("rate_limited") == 2


def test_usage_reports_the_current_window(svc, clock):
    """usage shows the plan, what was used this minute and when the window began."""
    use(svc, "c-1", 3)
    clock.advance(seconds=20)

    assert svc.usage("c-1") == {
        "client_id": "c-1",
        "plan": "free",
        "used": 3,
        "limit": 10,
        "window_start": "2024-01-15T09:00:00+00:00",
    }
    clock.advance(seconds=40)
    assert svc.usage("c-1")["used"] == 0


def test_new_client_usage_starts_at_the_minute(svc, clock):
    """A client never seen is on the free plan, with nothing used since the minute began."""
    clock.advance(seconds=42)

    assert svc.usage("new") == {
        "client_id": "new",
        "plan": "free",
        "used": 0,
        "limit": 10,
        "window_start": "2024-01-15T09:00:00+00:00",
    }
    clock.advance(seconds=18)
    assert svc.usage("new")["window_start"] == "2024-01-15T09:01:00+00:00"


def test_plan_shows_in_usage(svc):
    """A client's plan and its limit show in usage as soon as it is set."""
    svc.set_plan("c-1", "pro")
    svc.set_plan("svc-billing", "internal")

    assert (svc.usage("c-1")["plan"], svc.usage("c-1")["limit"]) == ("pro", 100)
    assert svc.usage("svc-billing")["limit"] is None
    assert svc.usage("c-2")["plan"] == "free"


def test_reset_clears_the_window(svc):
    """An operator reset gives the client its full quota back at once."""
    use(svc, "c-1", 10)

    assert svc.reset("c-1")["used"] == 0
    assert svc.log.events()[-1] == "window_reset"
    assert svc.check("c-1")["remaining"] == 9


def test_state_lives_in_the_store(store, bus, clock):
    """Two services on one store share plans and counts; a fresh store has neither."""
    first = create_service(store=store, bus=bus, clock=clock)
    first.set_plan("c-1", "pro")
    use(first, "c-1", 5)
    second = create_service(store=store, bus=bus, clock=clock)

    assert second.check("c-1")["remaining"] == 94
    assert (
        create_service(store=KeyValueStore(), bus=bus, clock=clock).usage("c-1")["plan"] == "free"
    )


def test_check_requests_answer_429_when_used_up(svc):
    """handle() answers a check with 200 while allowed and 429 once the quota is used up."""
    check = Request("ratelimit.check", {"client_id": "c-1", "cost": 10})
    allowed = svc.handle(check)
    denied = svc.handle(check)
    default_cost = svc.handle(Request("ratelimit.check", {"client_id": "c-2"}))

    assert (allowed.status, allowed.body["remaining"]) == (200, 0)
    assert (denied.status, denied.body["retry_after"]) == (429, 60)
    assert (default_cost.status, default_cost.body["remaining"]) == (200, 9)


def test_bad_requests_answer_400(svc):
    """handle() answers 400 for an unknown plan or a bad cost, naming the field."""
    plan = svc.handle(Request("ratelimit.set_plan", {"client_id": "c-1", "plan": "gold"}))
    cost = svc.handle(Request("ratelimit.check", {"client_id": "c-1", "cost": 0}))
    good = svc.handle(Request("ratelimit.set_plan", {"client_id": "c-1", "plan": "pro"}))

    assert (plan.status, plan.body["error"], plan.body["field"]) == (400, "invalid", "plan")
    assert (cost.status, cost.body["field"]) == (400, "cost")
    assert (good.status, good.body) == (200, {"client_id": "c-1", "plan": "pro"})


def test_routes(svc):
    """The service answers the legacy actions as ratelimit.<action> routes."""
    expected = {"set_plan", "check", "usage", "reset"}

    assert set(svc.routes) == {f"ratelimit.{action}" for action in expected}
