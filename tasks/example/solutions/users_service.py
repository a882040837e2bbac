"""Users service: register, find, rename, deactivate and reactivate accounts (ported from
legacy/users.py)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from nimbus import Conflict, Invalid, NotFound, Service, handler

EMAIL_RE = re.compile(r"^[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$")
MAX_EMAIL = 254
NAME_MIN, NAME_MAX = 2, 40
RESERVED_NAMES = frozenset({"admin", "root", "support", "nimbus"})
REASONS = ("user_request", "abuse", "inactivity")
GRACE = timedelta(days=30)  # a deactivated account may come back within this (not after abuse)
ACTIVE, DEACTIVATED = "active", "deactivated"


def _user_key(user_id: str) -> str:
    return f"user:{user_id}"


def _email_key(email: str) -> str:
    return f"email:{email}"


def clean_email(email: str) -> str:
    email = email.strip().lower()
    if len(email) > MAX_EMAIL or not EMAIL_RE.match(email):
        raise Invalid(f"invalid email: {email}", field="email")
    return email


def clean_name(name: str) -> str:
    name = " ".join(name.split())  # trim and collapse inner whitespace
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise Invalid(f"name must be {NAME_MIN}-{NAME_MAX} characters", field="name")
    if name.lower() in RESERVED_NAMES:
        raise Invalid(f"name {name} is reserved", field="name")
    return name


class UsersService(Service):
    """Users live under user:<id>; email:<address> maps a lowercased address to its user id."""

    name = "users"

    @handler("users.register", status=201)
    def register(self, email: str, name: str) -> dict[str, Any]:
        email = clean_email(email)
        name = clean_name(name)
        if _email_key(email) in self.store:
            raise Conflict(f"email {email} already registered", field="email")
        user_id = f"usr-{self.store.incr('users:seq'):04d}"
        user = {
            "id": user_id,
            "email": email,
            "name": name,
            "status": ACTIVE,
            "created_at": self.clock.now().isoformat(),
            "deactivated_at": None,
            "reason": None,
        }
        self.store.put(_user_key(user_id), user)
        self.store.put(_email_key(email), user_id)
        self.bus.publish("user.registered", {"user_id": user_id, "email": email})
        self.log.info("user_registered", user_id=user_id)
        return user

    @handler("users.get")
    def get(self, user_id: str) -> dict[str, Any]:
        user = self.store.get(_user_key(user_id))
        if user is None:
            raise NotFound(f"no user {user_id}", field="user_id")
        return user

    @handler("users.find")
    def find_by_email(self, email: str) -> dict[str, Any]:
        user_id = self.store.get(_email_key(email.strip().lower()))
        if user_id is None:
            raise NotFound(f"no user with email {email}", field="email")
        return self.get(user_id)

    @handler("users.rename")
    def rename(self, user_id: str, name: str) -> dict[str, Any]:
        user = self._in_status(user_id, ACTIVE)
        user["name"] = clean_name(name)
        self.store.put(_user_key(user_id), user)
        return user

    @handler("users.deactivate")
    def deactivate(self, user_id: str, reason: str) -> dict[str, Any]:
        if reason not in REASONS:
            raise Invalid(f"reason must be one of {', '.join(REASONS)}", field="reason")
        user = self._in_status(user_id, ACTIVE)
        user.update(status=DEACTIVATED, deactivated_at=self.clock.now().isoformat(), reason=reason)
        self.store.put(_user_key(user_id), user)
        self.bus.publish("user.deactivated", {"user_id": user_id, "reason": reason})
        self.log.info("user_deactivated", user_id=user_id, reason=reason)
        return user

    @handler("users.reactivate")
    def reactivate(self, user_id: str) -> dict[str, Any]:
        user = self._in_status(user_id, DEACTIVATED)
        if user["reason"] == "abuse":
            raise Conflict(f"user {user_id} was banned", field="user_id")
        if self.clock.now() - datetime.fromisoformat(user["deactivated_at"]) > GRACE:
            raise Conflict(f"grace period over for {user_id}", field="user_id")
        user.update(status=ACTIVE, deactivated_at=None, reason=None)
        self.store.put(_user_key(user_id), user)
        self.bus.publish("user.reactivated", {"user_id": user_id})
        self.log.info("user_reactivated", user_id=user_id)
        return user

    def _in_status(self, user_id: str, status: str) -> dict[str, Any]:
        user = self.get(user_id)
        if user["status"] != status:
            raise Conflict(f"user {user_id} is {user['status']}", field="user_id")
        return user


def create_service(**deps: Any) -> UsersService:
    """The service on the given resources (store=, bus=, clock=); missing ones are fresh."""
    return UsersService(**deps)
