"""Rate limiter service: per-client request quotas in fixed one-minute windows (ported from
legacy/rate_limiter.py)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from nimbus import Invalid, Response, Service, handler

PLANS: dict[str, int | None] = {"free": 10, "pro": 100, "internal": None}  # None = no limit
DEFAULT_PLAN = "free"
WINDOW_SECONDS = 60  # windows are aligned to the clock's minute, not to the first request
MAX_COST = 10  # an expensive call may count as up to 10 requests


def _plan_key(client_id: str) -> str:
    return f"plan:{client_id}"


def _window_key(client_id: str) -> str:
    return f"window:{client_id}"


class RateLimiterService(Service):
    """A client's plan lives under plan:<client>, its current window under window:<client>."""

    name = "rate_limiter"

    @handler("ratelimit.set_plan")
    def set_plan(self, client_id: str, plan: str) -> dict[str, Any]:
        if plan not in PLANS:
            raise Invalid(f"unknown plan {plan}", field="plan")
        self.store.put(_plan_key(client_id), plan)
        self.log.info("plan_changed", client_id=client_id, plan=plan)
        return {"client_id": client_id, "plan": plan}

    def check(self, client_id: str, cost: int = 1) -> dict[str, Any]:
        """Count one request of `cost` against the client's quota, if it fits."""
        if not 1 <= cost <= MAX_COST:
            raise Invalid(f"cost must be 1..{MAX_COST}", field="cost")
        plan = self._plan(client_id)
        limit = PLANS[plan]
        if limit is None:
            return {"allowed": True, "remaining": None, "retry_after": 0, "limit": None}
        now = self.clock.now().timestamp()
        window = self._window(client_id, now)
        if window["used"] + cost > limit:
            if not window["warned"]:
                window["warned"] = True
                self.store.put(_window_key(client_id), window)
                self.log.warning("rate_limited", client_id=client_id, plan=plan, limit=limit)
                self.bus.publish(
                    "ratelimit.exceeded", {"client_id": client_id, "plan": plan, "limit": limit}
                )
            retry_after = math.ceil(window["start"] + WINDOW_SECONDS - now)
            remaining = limit - window["used"]
            return {
                "allowed": False,
                "remaining": remaining,
                "retry_after": retry_after,
                "limit": limit,
            }
        window["used"] += cost
        self.store.put(_window_key(client_id), window)
        return {
            "allowed": True,
            "remaining": limit - window["used"],
            "retry_after": 0,
            "limit": limit,
        }

    @handler("ratelimit.check")
    def check_request(self, client_id: str, cost: int = 1) -> Response:
        """The check as a request: 200 when allowed, 429 when the quota is used up."""
        decision = self.check(client_id, cost)
        return Response(200 if decision["allowed"] else 429, decision)

    @handler("ratelimit.usage")
    def usage(self, client_id: str) -> dict[str, Any]:
        plan = self._plan(client_id)
        window = self._window(client_id, self.clock.now().timestamp())
        return {
            "client_id": client_id,
            "plan": plan,
            "used": window["used"],
            "limit": PLANS[plan],
            "window_start": datetime.fromtimestamp(window["start"], UTC).isoformat(),
        }

    @handler("ratelimit.reset")
    def reset(self, client_id: str) -> dict[str, Any]:
        self.store.delete(_window_key(client_id))
        self.log.info("window_reset", client_id=client_id)
        return self.usage(client_id)

    def _plan(self, client_id: str) -> str:
        return self.store.get(_plan_key(client_id), DEFAULT_PLAN)

    def _window(self, client_id: str, now: float) -> dict[str, Any]:
        start = now - now % WINDOW_SECONDS
        window = self.store.get(_window_key(client_id))
        if window is None or window["start"] != start:
            window = {"start": start, "used": 0, "warned": False}
        return window


def create_service(**deps: Any) -> RateLimiterService:
    """The service on the given resources (store=, bus=, clock=); missing ones are fresh."""
    return RateLimiterService(**deps)
