"""The paid-call layer: every try is reserved, made, priced, settled and recorded.

This layer owns retries (the SDKs' are off and the adapters make one request per call), so
that each try, not just each call, is reserved against the budget before it is sent, and a
stopping run makes no further try.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import structlog

from harness.budget import Budget, estimate_worst_case
from harness.pricing import MILLION, Price, PriceTable, cost
from harness.providers._gate import CredentialGate
from harness.providers._retry import RetryPolicy, log_exhausted, retrying
from harness.providers.base import (
    AuthenticationError,
    CallRequest,
    Completion,
    Provider,
    ProviderError,
    StopReason,
    Usage,
)
from harness.results import StopCause

__all__ = ["CallLog", "Caller", "PricedCompletion", "RunStopped"]

log = structlog.get_logger()


class RunStopped(Exception):
    """The run is stopping (a signal, or a halt): no new calls are made. `cause` says which."""

    def __init__(self, message: str, cause: StopCause = StopCause.RUN_STOPPED) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class PricedCompletion:
    """A completion and what the call cost in all, failed tries included."""

    completion: Completion
    cost_usd: Decimal


class CallLog(Protocol):
    """Where calls are recorded as they happen (the run store, the run folder)."""

    def open_call(self, request: CallRequest, reserved_usd: Decimal) -> Any: ...

    def close_call(self, handle: Any, completion: Completion, cost_usd: Decimal) -> None: ...


class Caller:
    """Every paid call goes through `call`; nothing is sent without a reservation."""

    def __init__(
        self,
        providers: Mapping[str, Provider],
        prices: PriceTable,
        budget: Budget,
        call_log: CallLog,
        provider_limits: Mapping[str, int] | None = None,
        stop: threading.Event | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._stop = stop or threading.Event()
        self._providers = dict(providers)
        self._prices = prices
        self._budget = budget
        self._log = call_log
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        limits = provider_limits or {}
        self._slots = {
            name: threading.BoundedSemaphore(limits.get(name, 4)) for name in self._providers
        }
        self._gates = {name: CredentialGate() for name in self._providers}
        self._halt: AuthenticationError | None = None
        self._halt_lock = threading.Lock()

    @property
    def halted(self) -> AuthenticationError | None:
        """The refusal (credentials, billing, spend limit) that halted the run, if one did."""
        return self._halt

    def spent_task(self, task_id: str) -> Decimal:
        """What the task has cost so far (this run, including any resumed part)."""
        return self._budget.spent_task(task_id)

    def call(self, request: CallRequest) -> PricedCompletion:
        """Make one call, retrying transient faults; raises BudgetExceeded before spending,
        RunStopped once the run is stopping, ProviderError when the tries run out."""
        price = self._prices.get(request.route.model)
        failed: list[Decimal] = []
        loop = retrying(self._retry, request, sleep=self._sleep, stop=self._stop.is_set)
        try:
            completion, amount = loop(self._try, request, price, failed)
        except ProviderError as exc:
            log_exhausted(request, exc, loop)
            raise
        retries = loop.statistics.get("attempt_number", 1) - 1
        completion = dataclasses.replace(completion, retries=retries)
        return PricedCompletion(completion, amount + sum(failed, Decimal(0)))

    def _try(
        self, request: CallRequest, price: Price, failed: list[Decimal]
    ) -> tuple[Completion, Decimal]:
        """One request: wait for the provider's gate and a slot, then reserve, send, settle,
        record. The first refused key or unpaid account halts the run before another goes."""
        route = request.route
        with self._gates[route.provider].passage(), self._slots[route.provider]:
            if self._stop.is_set():  # checked after the waits, not before them
                raise self._stopped()
            worst = _worst_case(request, price, self._providers[route.provider])
            reservation = self._budget.reserve(request.task_id, worst)
            handle = self._log.open_call(request, worst)
            try:
                completion = self._providers[route.provider].complete(request)
            except AuthenticationError as exc:
                self._halt_run(exc)
                self._settle(request, reservation, handle, _failed(request, exc), price)
                raise
            except ProviderError as exc:
                if exc.status is not None:  # the server answered without refusing the key
                    self._gates[route.provider].prove()
                amount = self._settle_failed(request, reservation, handle, exc, price, worst)
                failed.append(amount)
                raise
            except BaseException:
                # Not a vendor answer (a harness bug, an interrupt): the request may have
                # been billed, so the reservation stands as the cost, conservatively.
                self._settle(request, reservation, handle, _failed(request, None), price, worst)
                raise
            self._gates[route.provider].prove()
            return completion, self._settle(request, reservation, handle, completion, price)

    def _settle_failed(
        self,
        request: CallRequest,
        reservation: Any,
        handle: Any,
        exc: ProviderError,
        price: Price,
        worst: Decimal,
    ) -> Decimal:
        """Charge a failed try what the vendor may have billed for it, never less.

        A try whose outcome is unknown (it may have reached the vendor: a timeout, a dropped
        connection, a cut stream) is charged its whole reservation, the most the vendor can
        bill for it, so the cap bounds the vendor's bill; any other failure is charged the
        usage the vendor reported before it failed (usually nothing).
        """
        billed = cost(exc.billed, price)
        if not exc.outcome_unknown:
            return self._settle(request, reservation, handle, _failed(request, exc), price)
        amount = max(worst, billed)
        log.warning(
            "call_outcome_unknown",
            step=request.step,
            attempt=request.attempt,
            provider=request.route.provider,
            error=exc.message[:200],
            reported_usd=str(billed),
            charged_usd=str(amount),
        )
        return self._settle(request, reservation, handle, _failed(request, exc), price, amount)

    def _halt_run(self, exc: AuthenticationError) -> None:
        """Stop every new call now: the key or the account was refused, and would be again."""
        with self._halt_lock:
            first = self._halt is None
            if first:
                self._halt = exc
        self._stop.set()
        if first:
            log.error("run_halted", provider=exc.provider, status=exc.status, error=str(exc))

    def _stopped(self) -> RunStopped:
        if self._halt is not None:
            return RunStopped(f"run halted: {self._halt}", StopCause.HALTED)
        return RunStopped("run stopping: no new calls")

    def _settle(
        self,
        request: CallRequest,
        reservation: Any,
        handle: Any,
        completion: Completion,
        price: Price,
        amount: Decimal | None = None,
    ) -> Decimal:
        """Replace the reservation with the real cost (or `amount`), in budget and records."""
        amount = cost(completion.usage, price) if amount is None else amount
        self._budget.settle(reservation, amount)
        self._log.close_call(handle, completion, amount)
        _log_call(request, completion, amount)
        return amount


def _worst_case(request: CallRequest, price: Price, provider: Provider) -> Decimal:
    """The most one try can cost, over every request the provider may make for it.

    A provider that follows continuations (`requests_per_call` > 1) re-sends the prompt
    plus what it has produced so far on each hop, so hop k may bill the prompt, k earlier
    outputs as input, and a full output of its own.
    """
    hops = getattr(provider, "requests_per_call", 1)
    one = estimate_worst_case(request.prompt, request.route, price)
    dearest_input = max(price.input, price.cache_write, price.cache_read)
    resent = request.route.max_tokens * dearest_input / MILLION
    return hops * one + resent * hops * (hops - 1) / 2


def _failed(request: CallRequest, exc: ProviderError | None) -> Completion:
    """A failed try as a record: no text, the usage billed before it failed."""
    usage = exc.billed if exc is not None else Usage()
    detail = str(exc) if exc is not None else "the call raised outside the provider contract"
    route = request.route
    return Completion("", usage, StopReason.ERROR, route.model, route.provider, detail=detail)


def _log_call(request: CallRequest, completion: Completion, amount: Decimal) -> None:
    """One canonical line per paid try; prompts and replies go to files, never here."""
    usage = completion.usage
    log.info(
        "call_finished",
        step=request.step,
        attempt=request.attempt,
        tier=request.route.tier,
        provider=completion.provider,
        model=completion.model,
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        output_tokens=usage.output_tokens,
        stop_reason=completion.stop_reason.value,
        cost_usd=str(amount),
        latency_s=round(completion.latency_s, 3),
    )
