"""The paid-call layer: every try reserved, settled and recorded; stops honoured."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest

from harness.budget import Budget, BudgetExceeded, estimate_worst_case
from harness.pricing import cost, load_prices
from harness.providers._errors import with_billed_usage
from harness.providers.base import (
    CallRequest,
    Completion,
    ErrorKind,
    Prompt,
    ProviderError,
    Route,
    StopReason,
    Usage,
)
from harness.providers.calls import Caller, RunStopped
from harness.providers.retry import RetryPolicy

PRICES = load_prices()
MODEL = "claude-sonnet-5-5"
ROUTE = Route("mid", "fake", MODEL, 1000)
REQUEST = CallRequest(ROUTE, Prompt("s", "stable " * 50, "variable"), "t1", "write", 1)
FAST = RetryPolicy(max_attempts=5, backoff_base_s=0, backoff_max_s=0)
BILLED = Usage(input_tokens=400, output_tokens=990)  # a stream cut near its end


class Flaky:
    """Fails `failures` times with a billed, transient stream cut, then answers."""

    name = "fake"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.requests = 0

    def complete(self, request: CallRequest) -> Completion:
        self.requests += 1
        if self.requests <= self.failures:
            error = ProviderError(ErrorKind.TRANSIENT, "stream cut", provider="fake")
            raise with_billed_usage(error, BILLED)
        return Completion("ok", Usage(400, 0, 0, 10), StopReason.END, MODEL, "fake")


class Ledger:
    """A CallLog that remembers what was opened and how each call was closed."""

    def __init__(self) -> None:
        self.open: dict[int, Decimal] = {}
        self.closed: list[tuple[str, Decimal]] = []

    def open_call(self, request: CallRequest, reserved_usd: Decimal) -> int:
        self.open[len(self.open)] = reserved_usd
        return len(self.open) - 1

    def close_call(self, handle: int, completion: Completion, cost_usd: Decimal) -> None:
        del self.open[handle]
        self.closed.append((completion.stop_reason.value, cost_usd))


def caller(provider, cap: str, ledger: Ledger, **kwargs) -> tuple[Caller, Budget]:
    budget = Budget(cap_run=Decimal(cap))
    return Caller(
        {"fake": provider}, PRICES, budget, ledger, retry=FAST, sleep=lambda s: None, **kwargs
    ), budget


def test_every_try_is_reserved_so_retries_never_cross_the_cap() -> None:
    """Billed retries stop when the next try's worst case no longer fits under the cap."""
    price = PRICES.get(MODEL)
    worst = estimate_worst_case(REQUEST.prompt, ROUTE, price)
    cap = str(worst * 2 + cost(BILLED, price))  # room for about two and a half tries
    ledger = Ledger()
    call, budget = caller(Flaky(failures=10), cap, ledger)

    with pytest.raises(BudgetExceeded):
        call.call(REQUEST)

    assert budget.spent_run <= Decimal(cap)
    assert [reason for reason, _ in ledger.closed] == ["error"] * len(ledger.closed)
    assert budget.spent_run == sum(amount for _, amount in ledger.closed)
    assert not ledger.open


def test_failed_tries_are_recorded_and_counted_in_the_calls_cost() -> None:
    """Two billed failures then success: three records, and the call's cost includes all three."""
    price = PRICES.get(MODEL)
    ledger = Ledger()
    call, budget = caller(Flaky(failures=2), "100", ledger)

    priced = call.call(REQUEST)

    assert [reason for reason, _ in ledger.closed] == ["error", "error", "end"]
    assert priced.cost_usd == 2 * cost(BILLED, price) + cost(Usage(400, 0, 0, 10), price)
    assert priced.cost_usd == budget.spent_run
    assert priced.completion.retries == 2


def test_a_call_waiting_for_a_slot_is_not_sent_once_the_run_stops() -> None:
    """The stop is checked after the wait for a provider slot, before anything is reserved."""
    stop = threading.Event()
    provider = Flaky(failures=0)
    ledger = Ledger()
    call, budget = caller(provider, "100", ledger, provider_limits={"fake": 1}, stop=stop)
    slot = call._slots["fake"]
    slot.acquire()  # another call holds the only slot
    outcome: list[BaseException] = []
    waiting = threading.Thread(target=lambda: _capture(outcome, call.call, REQUEST))
    waiting.start()
    stop.set()
    slot.release()
    waiting.join(5)

    assert isinstance(outcome[0], RunStopped)
    assert (provider.requests, budget.spent_run, ledger.closed) == (0, 0, [])


def test_a_stopping_run_makes_no_further_try() -> None:
    """A retryable failure after the stop ends the call instead of retrying it."""
    stop = threading.Event()

    class StopsThenFails(Flaky):
        def complete(self, request):
            stop.set()
            return super().complete(request)

    provider = StopsThenFails(failures=3)
    call, _ = caller(provider, "100", Ledger(), stop=stop)

    with pytest.raises(ProviderError):
        call.call(REQUEST)

    assert provider.requests == 1


def _capture(sink: list[BaseException], fn, *args) -> None:
    try:
        fn(*args)
    except BaseException as exc:
        sink.append(exc)


def test_a_provider_that_follows_continuations_is_reserved_for_every_hop() -> None:
    """With up to 3 requests per call, the reservation covers three prompts, three outputs and
    the earlier outputs re-sent as input."""
    price = PRICES.get(MODEL)

    class Hops(Flaky):
        requests_per_call = 3

        def complete(self, request):
            held.append(budget.reserved_run)
            return super().complete(request)

    held: list[Decimal] = []
    call, budget = caller(Hops(failures=0), "100", Ledger())
    call.call(REQUEST)

    one = estimate_worst_case(REQUEST.prompt, ROUTE, price)
    resent = (
        ROUTE.max_tokens * max(price.input, price.cache_write, price.cache_read) / Decimal(10**6)
    )
    assert held == [3 * one + 3 * resent]
