"""The paid-call layer: reserve budget, call the provider, price the usage, settle, record."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

import structlog

from harness.pricing import PriceTable, cost
from harness.providers._errors import billed_usage
from harness.providers.base import CallRequest, Completion, Provider, ProviderError

__all__ = ["CallLog", "Caller", "PricedCompletion", "RunStopped"]

log = structlog.get_logger()


class RunStopped(Exception):
    """The run is stopping (signal or run-level budget cap): no new calls are made."""


@dataclass(frozen=True)
class PricedCompletion:
    completion: Completion
    cost_usd: Decimal


class CallLog(Protocol):
    """Where finished calls are recorded (the run directory / run store)."""

    def record_call(
        self, request: CallRequest, completion: Completion, cost_usd: Decimal
    ) -> None: ...


class Caller:
    """Every paid call goes through `call`: the budget is reserved *before* the request."""

    def __init__(
        self,
        providers: Mapping[str, Provider],
        prices: PriceTable,
        budget,  # harness.budget.Budget: reserve / settle / release
        call_log: CallLog,
        provider_limits: Mapping[str, int] | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self._stop = stop or threading.Event()
        self._providers = dict(providers)
        self._prices = prices
        self._budget = budget
        self._log = call_log
        limits = provider_limits or {}
        self._slots = {
            name: threading.BoundedSemaphore(limits.get(name, 4)) for name in self._providers
        }

    def call(self, request: CallRequest) -> PricedCompletion:
        """Make one call; raises BudgetExceeded before spending, ProviderError on failure."""
        from harness.budget import estimate_worst_case

        if self._stop.is_set():
            raise RunStopped("run stopping: no new calls")
        route = request.route
        price = self._prices.get(route.model)
        reservation = self._budget.reserve(
            request.task_id, estimate_worst_case(request.prompt, route, price)
        )
        try:
            with self._slots[route.provider]:
                completion = self._providers[route.provider].complete(request)
        except ProviderError as exc:
            # A stream cut part-way may already have been billed: charge what the vendor
            # reported before the failure, never silently drop it.
            self._budget.settle(reservation, cost(billed_usage(exc), price))
            raise
        except BaseException:
            self._budget.release(reservation)
            raise
        amount = cost(completion.usage, price)
        self._budget.settle(reservation, amount)
        self._log.record_call(request, completion, amount)
        log.info(
            "call_finished",
            step=request.step,
            attempt=request.attempt,
            provider=completion.provider,
            model=completion.model,
            tier=route.tier,
            input_tokens=completion.usage.input_tokens,
            cache_read_tokens=completion.usage.cache_read_tokens,
            cache_write_tokens=completion.usage.cache_write_tokens,
            output_tokens=completion.usage.output_tokens,
            stop_reason=completion.stop_reason.value,
            cost_usd=str(amount),
            latency_s=round(completion.latency_s, 3),
            retries=completion.retries,
        )
        return PricedCompletion(completion, amount)
