"""The paid-call layer: every try is reserved, made, priced, settled and recorded.

This layer owns retries (the SDKs' are off and the adapters make one request per call), so
that each try, not just each call, is reserved against the budget before it is sent, and a
stopping run makes no further try.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Protocol

import structlog

from harness.budget import Abandoned, Budget, BudgetExceeded, CallKind
from harness.calls.charge import Charge, charge, charge_answer, charge_failure
from harness.calls.gate import DEFAULT_SLOTS, Gates, LocalGates
from harness.calls.retry import RetryPolicy, is_retryable, log_exhausted, retrying
from harness.calls.tries import (
    CallLog,
    PricedCompletion,
    RunStopped,
    failed_try,
    log_call,
    worst_case,
)
from harness.llm import (
    AuthenticationError,
    CallRequest,
    Completion,
    ErrorKind,
    Provider,
    ProviderError,
    Route,
    Usage,
)
from harness.pricing import MILLION, Price, PriceTable, cost
from harness.results import StopCause

__all__ = ["CallLog", "Caller", "Charge", "PricedCompletion", "RunStopped", "charge"]

log = structlog.get_logger()


class Rounds(Protocol):
    """Batch rounds (harness/runner/batch/rounds.py): `wait` blocks until the round carrying
    the request has ended and its reply, if it succeeded, is recorded for this run; False
    when the request does not go by batch."""

    def wait(self, request: CallRequest) -> bool: ...


class Caller:
    """Every paid call goes through `call`; nothing is sent without a reservation."""

    rounds: Rounds | None = None  # set by the runner when batch mode batches every step

    def __init__(
        self,
        providers: Mapping[str, Provider],
        prices: PriceTable,
        budget: Budget,
        call_log: CallLog,
        provider_limits: Mapping[str, int] | None = None,
        stop: threading.Event | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], object] | None = None,
        gates: Gates | None = None,
    ) -> None:
        self._stop = stop or threading.Event()
        self._providers = dict(providers)
        self._prices = prices
        self._budget = budget
        self._log = call_log
        self._retry = retry or RetryPolicy()
        # A retry's wait (a server may ask for minutes) ends early once the run is stopping.
        self._sleep = sleep or self._stop.wait
        limits = provider_limits or {}
        self._slots = {
            name: threading.BoundedSemaphore(limits.get(name, DEFAULT_SLOTS))
            for name in self._providers
        }
        self._gates = gates if gates is not None else LocalGates()
        self._halt: AuthenticationError | None = None
        self._halt_lock = threading.Lock()
        # Refusals met by optional calls (CallRequest.fails_open), per provider: they fail
        # those calls and the later optional ones, and halt nothing.
        self._refused_optional: dict[str, AuthenticationError] = {}
        # Whether any provider gave one usable reply (a completion): a night whose every
        # request failed (unreachable, a gateway's error page, 5xx, a body that is not the
        # vendor's) did nothing and must not look like a normal night.
        self._usable = threading.Event()
        self._unusable: ProviderError | None = None
        self._records: BaseException | None = None

    @property
    def halted(self) -> AuthenticationError | None:
        """The refusal (credentials, billing, spend limit) that halted the run, if one did."""
        return self._halt

    @property
    def unusable(self) -> ProviderError | None:
        """The failure that halted the run because no provider had given a usable reply."""
        return self._unusable

    @property
    def records_lost(self) -> BaseException | None:
        """The write the disk refused that halted the run (its records cannot be kept)."""
        return self._records

    @property
    def halt_reason(self) -> str | None:
        """Why the run halted, in one line a person acts on, or None if it did not."""
        if self._halt is not None:
            return f"run halted: {self._halt}"
        if self._records is not None:
            return f"run halted: the night's records could not be written ({self._records})"
        if self._unusable is not None:
            return (
                "run halted: no provider gave a usable reply to any of the night's requests "
                f"(last: {self._unusable})"
            )
        return None

    def halt_records(self, exc: BaseException) -> None:
        """Stop every new call: a record of the night could not be written (a full disk), so
        a call made now would be paid for and lost."""
        with self._halt_lock:
            first = self._records is None and self._halt is None
            if first:
                self._records = exc
        self._stop.set()
        if first:
            log.error("run_halted", reason="records", error=str(exc))

    def spent_task(self, task_id: str) -> Decimal:
        """What the task has cost so far (this run, including any resumed part)."""
        return self._budget.spent_task(task_id)

    def fits(self, *requests: CallRequest, grow_tokens: int = 0) -> bool:
        """Could the budget hold every one of `requests` in turn now (a tool round and the
        final answer after it), the last one's input grown by `grow_tokens` (what the round
        before it may add)? Nothing is held; the calls themselves still reserve."""
        if not requests:
            return True
        amount = Decimal(0)
        for r in requests:
            price = self._prices.get(r.route.model, r.route.pricing)
            provider = self._providers[r.route.provider]
            amount += worst_case(r, price, provider)
        dearest = max(price.input, price.cache_write, price.cache_read)
        amount += grow_tokens * dearest * provider.requests_per_call / MILLION
        return self._budget.could_fit(requests[0].task_id, amount)

    def call(self, request: CallRequest) -> PricedCompletion:
        """Make one call, retrying transient faults; raises BudgetExceeded before spending,
        RunStopped once the run is stopping, ProviderError when the tries run out.

        A request this run already received and recorded a reply to (a resume redoing the
        attempt it was killed in) gets that reply again, bought once, never twice."""
        reused = self._reuse(request)
        if reused is None and self.rounds is not None and self.rounds.wait(request):
            reused = self._reuse(request)  # bought in a batch round, or else bought now
        if reused is not None:
            return reused
        failed: list[Decimal] = []
        loop = retrying(self._retry, request, sleep=self._sleep, stop=self._stop.is_set)
        try:
            completion, amount, route = loop(self._try, request, failed)
        except ProviderError as exc:
            if self._stop.is_set() and is_retryable(exc):
                raise self._stopped() from exc  # the stop, not the fault, ended the retries
            log_exhausted(request, exc, loop)
            if self._nothing_usable(request, exc):
                self._halt_unusable(exc)
            raise
        retries = loop.statistics.get("attempt_number", 1) - 1
        completion = dataclasses.replace(completion, retries=retries)
        return PricedCompletion(completion, amount + sum(failed, Decimal(0)), route)

    def _reuse(self, request: CallRequest) -> PricedCompletion | None:
        recorded = self._log.recorded(request)
        if recorded is None:
            return None
        if self._stop.is_set():
            raise self._stopped()
        route = next(
            (r for r in (request.route, *request.fallbacks) if r.tier == recorded.tier),
            request.route,
        )
        log.info(
            "call_reused",
            step=request.step,
            attempt=request.attempt,
            tier=recorded.tier,
            cost_usd=str(recorded.cost_usd),
        )
        return PricedCompletion(recorded.completion, recorded.cost_usd, route)

    def _try(
        self, request: CallRequest, failed: list[Decimal]
    ) -> tuple[Completion, Decimal, Route]:
        """One request: wait for the provider's gate and a slot, then reserve, send, settle,
        record. The first refused key or unpaid account halts the run before another goes."""
        name = request.route.provider
        with (
            self._gates.passage(name),
            self._slots[name],
            self._gates.slot(name, self._stop.is_set),
        ):
            elsewhere = self._gates.halted()  # another worker of the night met a refusal
            if elsewhere is not None:
                self._halt_run(elsewhere)
            if self._stop.is_set():  # checked after the waits, not before them
                raise self._stopped()
            refused = self._refused_optional.get(name)
            if refused is not None and request.fails_open:
                raise refused  # that key was refused once: an optional call never resends it
            request, worst, reservation = self._reserve(request)
            price = self._prices.get(request.route.model, request.route.pricing)
            handle = self._log.open_call(request, worst)
            try:
                completion = self._providers[name].complete(request)
            except AuthenticationError as exc:
                if request.fails_open:  # the judge never stops a night
                    self._refused_optional[name] = exc
                    log.warning("optional_call_refused", step=request.step, error=str(exc))
                else:
                    self._gates.halt(exc)  # told before the gate opens for the next request
                    self._halt_run(exc)
                self._settle(request, reservation, handle, failed_try(request, exc), price)
                raise
            except ProviderError as exc:
                if exc.status is not None:  # the server answered without refusing the key
                    self._gates.prove(name)
                amount = self._settle_failed(request, reservation, handle, exc, price, worst)
                failed.append(amount)
                raise
            except BaseException:
                # Not a vendor answer (a harness bug, an interrupt): the request may have
                # been billed, so the reservation stands as the cost, conservatively.
                self._settle(request, reservation, handle, failed_try(request, None), price, worst)
                raise
            self._gates.prove(name)
            self._usable.set()
            return self._settle_answered(request, reservation, handle, completion, worst)

    def _reserve(self, request: CallRequest) -> tuple[CallRequest, Decimal, Any]:
        """Reserve the worst case of the request's route, or of the first fallback that fits
        (a fallback on another provider is not taken: the slot held is this provider's).
        Waits while calls in flight hold the room it needs; (request as sent, worst, held)."""
        routes = [request.route]
        routes += [r for r in request.fallbacks if r.provider == request.route.provider]
        provider = self._providers[request.route.provider]
        worsts = [
            worst_case(
                dataclasses.replace(request, route=r),
                self._prices.get(r.model, r.pricing),
                provider,
            )
            for r in routes
        ]
        try:
            index, reservation = self._budget.reserve_first(
                request.task_id,
                worsts,
                keep_waiting=lambda: not self._stop.is_set(),
                calls=[CallKind(request.step, r.tier, r.max_tokens) for r in routes],
            )
        except Abandoned:
            raise self._stopped() from None
        if index:
            log.warning(
                "tier_fallback",
                step=request.step,
                attempt=request.attempt,
                wanted_tier=routes[0].tier,
                tier=routes[index].tier,
                wanted_usd=str(worsts[0]),
                reserved_usd=str(worsts[index]),
                left_usd=str(self._budget.left_run),
            )
        return dataclasses.replace(request, route=routes[index]), worsts[index], reservation

    def _settle(
        self,
        request: CallRequest,
        reservation: Any,
        handle: Any,
        completion: Completion,
        price: Price,
        amount: Decimal | None = None,
    ) -> Decimal:
        """Replace the reservation with the real cost (or `amount`), in budget and records.
        The usage is priced at the tier that served it (a flex call shed to standard pays
        standard; a batch entry, the batch price)."""
        if amount is None:
            amount = cost(completion.usage, price.at(completion.service_tier))
        self._budget.settle(reservation, amount)
        self._log.close_call(handle, completion, amount)
        log_call(request, completion, amount)
        return amount

    def _settle_answered(
        self,
        request: CallRequest,
        reservation: Any,
        handle: Any,
        completion: Completion,
        worst: Decimal,
    ) -> tuple[Completion, Decimal, Route]:
        """Settle an answer at its usage on the model that answered; a usage report that
        cannot be true is charged the whole reservation (see `_charge`) and dropped."""
        price = self._prices.get(request.route.model, request.route.pricing)
        provider = self._providers[request.route.provider]
        amount = None  # a replay (not billed): its zero usage is the truth
        if provider.billed:
            billed = charge_answer(completion, request, self._prices, worst, provider)
            amount = billed.amount
            if billed.problem:  # the report is not a bill: keep it out of records and sums
                completion = dataclasses.replace(completion, usage=Usage())
        amount = self._settle(request, reservation, handle, completion, price, amount)
        return completion, amount, request.route

    def _settle_failed(
        self,
        request: CallRequest,
        reservation: Any,
        handle: Any,
        exc: ProviderError,
        price: Price,
        worst: Decimal,
    ) -> Decimal:
        """Charge a failed try what the vendor may have billed for it, never less (see
        `charge_failure`: an unknown outcome costs the whole reservation)."""
        provider = self._providers[request.route.provider]
        amount = charge_failure(exc, request, price, worst, provider)
        record = failed_try(request, exc)
        return self._settle(request, reservation, handle, record, price, amount)

    def _halt_run(self, exc: AuthenticationError) -> None:
        """Stop every new call now: the key or the account was refused, and would be again."""
        with self._halt_lock:
            first = self._halt is None
            if first:
                self._halt = exc
        self._stop.set()
        if first:
            log.error("run_halted", provider=exc.provider, status=exc.status, error=str(exc))

    def _nothing_usable(self, request: CallRequest, exc: ProviderError) -> bool:
        """Whether a call that failed for good shows the night can do nothing: no provider
        has given one usable reply, and the failure is neither a refusal nor a rate limit
        nor a replay's missing recording (a provider that bills nothing)."""
        if isinstance(exc, AuthenticationError) or exc.kind is ErrorKind.RATE_LIMIT:
            return False  # a refusal halts the run on its own; a busy vendor works
        if request.fails_open:
            return False  # an optional call stops nothing
        return self._providers[request.route.provider].billed and not self._usable.is_set()

    def _halt_unusable(self, exc: ProviderError) -> None:
        """Stop every new call: a request failed for good and no provider has given one
        usable reply all night (unreachable, error pages, bodies not the vendor's), so the
        next would fare the same."""
        with self._halt_lock:
            first = self._unusable is None and not self._usable.is_set()
            if first:
                self._unusable = exc
        self._stop.set()
        if first:
            log.error("run_halted", provider=exc.provider, reason="no_usable_reply", error=str(exc))

    def _stopped(self) -> RunStopped | BudgetExceeded:
        """Why no new call is made, the one reason every task it stops reports: the halt,
        else the budget refusal that stopped the run, else a signal."""
        reason = self.halt_reason
        if reason is not None:
            return RunStopped(reason, StopCause.HALTED)
        refusal = self._budget.refusal
        if refusal is not None:
            return refusal.again()
        return RunStopped("interrupted", StopCause.RUN_STOPPED)
