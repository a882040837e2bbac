"""Acceptance tests for the users service on nimbus (port of legacy/users.py)."""

from __future__ import annotations

import pytest

from nimbus import Conflict, Invalid, KeyValueStore, NotFound, Request
from users_service import create_service


@pytest.fixture
def svc(store, bus, clock):
    return create_service(store=store, bus=bus, clock=clock)


@pytest.fixture
def ann(svc):
    """The id of a registered user, Ann Lee."""
    return svc.register("ann@example.com", "Ann Lee")["id"]


def test_register_normalises_email_and_name(svc):
    """Email is trimmed and lowercased; the name is trimmed with inner spaces collapsed."""
    user = svc.register("  Ann.Lee@Example.COM ", "  Ann   Lee ")

    assert user == {
        "id": "usr-0001",
        "email": "ann.lee@example.com",
        "name": "Ann Lee",
        "status": "active",
        "created_at": "2024-01-15T09:00:00+00:00",
        "deactivated_at": None,
        "reason": None,
    }


@pytest.mark.parametrize(
    "email",
    ["ann.example.com", "ann@example", "ann@example.c", "ann lee@example.com", "ann@@example.com"],
)
def test_malformed_email_is_invalid(svc, email):
    """An address needs one @, a domain and a top-level domain of two letters or more."""
    with pytest.raises(Invalid) as err:
        svc.register(email, "Ann Lee")

    assert err.value.field == "email"


def test_email_shapes_that_are_accepted(svc):
    """Short domains, subdomains, dots and plus tags are all valid."""
    assert svc.register("a@b.co", "Al")["email"] == "a@b.co"
    assert svc.register("first.last+news@mail.example.org", "Bo")["id"] == "usr-0002"


def test_email_is_at_most_254_characters(svc):
    """254 characters is the longest address accepted."""
    domain = "@example.com"
    longest = "x" * (254 - len(domain)) + domain

    assert svc.register(longest, "Al")["email"] == longest
    with pytest.raises(Invalid):
        svc.register("y" + longest, "Al")


@pytest.mark.parametrize(
    ("name", "ok"),
    [("A", False), ("Al", True), ("x" * 40, True), ("x" * 41, False), ("  B  ", False)],
)
def test_name_is_two_to_forty_characters_after_trimming(svc, name, ok):
    """Names are 2 to 40 characters long once trimmed."""
    if ok:
        assert svc.register("ann@example.com", name)["name"] == name
    else:
        with pytest.raises(Invalid) as err:
            svc.register("ann@example.com", name)
        assert err.value.field == "name"


def test_reserved_names_are_refused_in_any_case(svc):
    """Admin, ROOT, support and nimbus are reserved; longer names containing them are not."""
    for name in ("Admin", "ROOT", "support", "Nimbus"):
        with pytest.raises(Invalid) as err:
            svc.register("ann@example.com", name)
        assert err.value.field == "name"

    assert svc.register("ann@example.com", "Administrator")["name"] == "Administrator"


def test_email_is_unique_regardless_of_case(svc, bus, ann):
    """A second account for the same address, in any case, is a conflict."""
    with pytest.raises(Conflict) as err:
        svc.register("ANN@example.com", "Other Ann")

    assert err.value.field == "email"
    assert bus.events("user.registered") == [{"user_id": ann, "email": "ann@example.com"}]
    assert svc.log.events().count("user_registered") == 1


def test_find_by_email(svc, ann):
    """Lookup by email ignores case and surrounding spaces; an unknown address is NotFound."""
    assert svc.find_by_email(" Ann@EXAMPLE.com")["id"] == ann
    with pytest.raises(NotFound) as err:
        svc.find_by_email("bob@example.com")
    assert err.value.field == "email"


def test_rename(svc, ann):
    """Renaming applies the name rules; only active users can be renamed."""
    assert svc.rename(ann, " Ann  Smith ")["name"] == "Ann Smith"
    assert svc.get(ann)["name"] == "Ann Smith"
    with pytest.raises(Invalid):
        svc.rename(ann, "root")
    svc.deactivate(ann, "user_request")
    with pytest.raises(Conflict):
        svc.rename(ann, "Ann Jones")


def test_deactivate_records_when_and_why(svc, bus, clock, ann):
    """Deactivation stores the time and reason and publishes user.deactivated."""
    clock.advance(hours=2)
    user = svc.deactivate(ann, "inactivity")

    assert (user["status"], user["reason"]) == ("deactivated", "inactivity")
    assert user["deactivated_at"] == "2024-01-15T11:00:00+00:00"
    assert svc.get(ann)["status"] == "deactivated"
    assert bus.events("user.deactivated") == [{"user_id": ann, "reason": "inactivity"}]
    assert "user_deactivated" in svc.log.events()


def test_deactivate_needs_a_known_reason_and_an_active_user(svc, ann):
    """An unknown reason is invalid; deactivating twice is a conflict."""
    with pytest.raises(Invalid) as err:
        svc.deactivate(ann, "spam")
    assert err.value.field == "reason"
    svc.deactivate(ann, "user_request")
    with pytest.raises(Conflict):
        svc.deactivate(ann, "user_request")


def test_reactivate_within_thirty_days(svc, bus, clock, ann):
    """An account comes back on day 30 exactly, with its deactivation cleared."""
    svc.deactivate(ann, "user_request")
    clock.advance(days=30)
    user = svc.reactivate(ann)

    assert (user["status"], user["deactivated_at"], user["reason"]) == ("active", None, None)
    assert svc.get(ann)["status"] == "active"
    assert bus.events("user.reactivated") == [{"user_id": ann}]
    assert svc.log.events()[-1] == "user_reactivated"


def test_reactivate_after_grace_period_conflicts(svc, clock, ann):
    """One second past 30 days is too late."""
    svc.deactivate(ann, "user_request")
    clock.advance(days=30, seconds=1)

    with pytest.raises(Conflict) as err:
        svc.reactivate(ann)
    assert err.value.field == "user_id"
    assert svc.get(ann)["status"] == "deactivated"


def test_only_non_abuse_deactivations_are_reversible(svc, ann):
    """Accounts closed for abuse never come back; active accounts cannot be reactivated."""
    bob = svc.register("bob@example.com", "Bob")["id"]
    svc.deactivate(ann, "abuse")

    with pytest.raises(Conflict):
        svc.reactivate(ann)
    with pytest.raises(Conflict):
        svc.reactivate(bob)


def test_unknown_user_is_not_found(svc):
    """Every operation on an unknown id raises NotFound."""
    with pytest.raises(NotFound):
        svc.get("usr-9999")
    with pytest.raises(NotFound):
        svc.rename("usr-9999", "Ann")
    with pytest.raises(NotFound):
        svc.deactivate("usr-9999", "abuse")
    with pytest.raises(NotFound):
        svc.reactivate("usr-9999")


def test_state_lives_in_the_store(store, bus, clock, ann):
    """Two services on one store share users and the email index; a fresh store has neither."""
    other = create_service(store=store, bus=bus, clock=clock)

    assert other.find_by_email("ann@example.com")["id"] == ann
    with pytest.raises(Conflict):
        other.register("ann@example.com", "Ann Again")
    assert other.register("bob@example.com", "Bob")["id"] == "usr-0002"
    with pytest.raises(NotFound):
        create_service(store=KeyValueStore(), bus=bus, clock=clock).get(ann)


def test_requests_map_to_status_codes(svc):
    """handle() answers 201 on register, and 400 / 404 / 409 for the typed errors."""
    body = {"email": "ann@example.com", "name": "Ann"}
    created = svc.handle(Request("users.register", body))
    again = svc.handle(Request("users.register", body))
    bad = svc.handle(Request("users.register", {"email": "ann", "name": "Ann"}))
    found = svc.handle(Request("users.find", {"email": "ANN@example.com"}))
    missing = svc.handle(Request("users.get", {"user_id": "usr-9999"}))

    assert (created.status, created.body["id"]) == (201, "usr-0001")
    assert (again.status, again.body["error"]) == (409, "conflict")
    assert (bad.status, bad.body["field"]) == (400, "email")
    assert (found.status, found.body["id"]) == (200, "usr-0001")
    assert missing.status == 404


def test_routes(svc):
    """The service answers the legacy actions as users.<action> routes."""
    expected = {"register", "get", "find", "rename", "deactivate", "reactivate"}

    assert set(svc.routes) == {f"users.{action}" for action in expected}
