"""The paid-call layer: every try reserved, settled and recorded; stops honoured."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from structlog.testing import capture_logs

from harness.budget import BudgetExceeded, estimate_worst_case
from harness.calls import RetryPolicy
from harness.calls.caller import RunStopped
from harness.llm import (
    AuthenticationError,
    CallRequest,
    Completion,
    ErrorKind,
    Prompt,
    Provider,
    ProviderError,
    Route,
    StopReason,
    Usage,
)
from harness.pricing import cost
from harness.results import StopCause
from tests.conftest import calls_over, fixture_prices

PRICES = fixture_prices()
MODEL = "claude-sonnet-5-5"
ROUTE = Route("mid", "fake", MODEL, 1000)
REQUEST = CallRequest(ROUTE, Prompt("s", "stable " * 50, "variable"), "t1", "write", 1)
FAST = RetryPolicy(max_attempts=5, backoff_base_s=0, backoff_max_s=0)
BILLED = Usage(input_tokens=400, output_tokens=990)  # a stream cut near its end


class Flaky(Provider):
    """Fails `failures` times with a billed, transient stream cut, then answers."""

    name = "fake"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.requests = 0

    def complete(self, request: CallRequest) -> Completion:
        self.requests += 1
        if self.requests <= self.failures:
            raise ProviderError(ErrorKind.TRANSIENT, "stream cut", provider="fake", billed=BILLED)
        return Completion("ok", Usage(400, 0, 0, 10), StopReason.END, MODEL, "fake")


def test_every_try_is_reserved_so_retries_never_cross_the_cap() -> None:
    """Billed retries stop when the next try's worst case no longer fits under the cap."""
    price = PRICES.get(MODEL)
    worst = estimate_worst_case(REQUEST.prompt, ROUTE, price)
    cap = str(worst * 2 + cost(BILLED, price))  # room for about two and a half tries
    calls = calls_over(Flaky(failures=10), FAST, cap=cap)

    with pytest.raises(BudgetExceeded):
        calls(REQUEST)

    closed = calls.records.closed
    assert calls.budget.spent_run <= Decimal(cap)
    assert [c.stop_reason for c, _ in closed] == [StopReason.ERROR] * len(closed)
    assert calls.budget.spent_run == sum(amount for _, amount in closed)
    assert not calls.records.open


def test_failed_tries_are_recorded_and_counted_in_the_calls_cost() -> None:
    """Two billed failures then success: three records, and the call's cost includes all three."""
    price = PRICES.get(MODEL)
    calls = calls_over(Flaky(failures=2), FAST)

    priced = calls.caller.call(REQUEST)

    assert [(c.stop_reason, c.usage) for c, _ in calls.records.closed] == [
        (StopReason.ERROR, BILLED),
        (StopReason.ERROR, BILLED),
        (StopReason.END, Usage(400, 0, 0, 10)),
    ]
    assert priced.cost_usd == 2 * cost(BILLED, price) + cost(Usage(400, 0, 0, 10), price)
    assert priced.cost_usd == calls.budget.spent_run
    assert priced.completion.retries == 2


def test_a_call_waiting_for_a_slot_is_not_sent_once_the_run_stops() -> None:
    """The stop is checked after the wait for a provider slot, before anything is reserved."""
    stop = threading.Event()
    provider = Flaky(failures=0)
    calls = calls_over(provider, FAST, provider_limits={"fake": 1}, stop=stop)
    slot = calls.caller._slots["fake"]
    slot.acquire()  # another call holds the only slot
    outcome: list[BaseException] = []
    waiting = threading.Thread(target=lambda: _capture(outcome, calls, REQUEST))
    waiting.start()
    stop.set()
    slot.release()
    waiting.join(5)

    assert isinstance(outcome[0], RunStopped)
    assert (provider.requests, calls.budget.spent_run, calls.records.closed) == (0, 0, [])


def test_a_stopping_run_makes_no_further_try() -> None:
    """A retryable failure after the stop ends the call, with the stop as its reason."""
    stop = threading.Event()

    class StopsThenFails(Flaky):
        def complete(self, request):
            stop.set()
            return super().complete(request)

    provider = StopsThenFails(failures=3)
    calls = calls_over(provider, FAST, stop=stop)

    with pytest.raises(RunStopped) as stopped:
        calls(REQUEST)

    assert (provider.requests, stopped.value.cause) == (1, StopCause.RUN_STOPPED)


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
            held.append(calls.budget.reserved_run)
            return super().complete(request)

    held: list[Decimal] = []
    calls = calls_over(Hops(failures=0), FAST)
    calls(REQUEST)

    one = estimate_worst_case(REQUEST.prompt, ROUTE, price)
    resent = (
        ROUTE.max_tokens * max(price.input, price.cache_write, price.cache_read) / Decimal(10**6)
    )
    assert held == [3 * one + 3 * resent]


class Refuses(Flaky):
    """Refuses the key on every request; the first one waits for `go` before answering."""

    def __init__(self) -> None:
        super().__init__(failures=0)
        self.go = threading.Event()

    def complete(self, request: CallRequest) -> Completion:
        self.requests += 1
        self.go.wait(5)
        raise AuthenticationError(ErrorKind.AUTH, "key refused", 401, provider="fake")


def test_a_refused_key_halts_the_run_before_a_waiting_worker_sends() -> None:
    """While the first request is out on an unproven key a second worker waits at the gate;
    the refusal halts the Caller, so the second call is stopped unsent (cause halted)."""
    provider = Refuses()
    calls = calls_over(provider, FAST)
    outcomes: list[BaseException] = []
    workers = [threading.Thread(target=_capture, args=(outcomes, calls, REQUEST)) for _ in "ab"]
    for worker in workers:
        worker.start()
    provider.go.set()
    for worker in workers:
        worker.join(5)

    kinds = sorted(type(exc).__name__ for exc in outcomes)
    stopped = next(exc for exc in outcomes if isinstance(exc, RunStopped))
    assert (provider.requests, kinds) == (1, ["AuthenticationError", "RunStopped"])
    assert (stopped.cause, calls.caller.halted is not None) == (StopCause.HALTED, True)
    with pytest.raises(RunStopped):
        calls(REQUEST)
    assert provider.requests == 1


def test_a_proven_provider_takes_calls_in_parallel() -> None:
    """Once a provider has answered, the gate no longer serialises its calls."""
    both_in = threading.Barrier(2, timeout=5)

    class Meets(Flaky):
        def complete(self, request):
            if self.requests:  # after the proving call, two must be out at once
                both_in.wait()
            return super().complete(request)

    provider = Meets(failures=0)
    calls = calls_over(provider, FAST)
    calls(REQUEST)
    outcomes: list[BaseException] = []
    workers = [threading.Thread(target=_capture, args=(outcomes, calls, REQUEST)) for _ in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(5)

    assert (provider.requests, outcomes) == (3, [])


def test_a_try_whose_outcome_is_unknown_is_charged_its_whole_reservation() -> None:
    """A timeout after the request was sent may have been billed in full: the try costs its
    reservation (not the $0 it reported), so the cap bounds what the vendor can bill."""
    price = PRICES.get(MODEL)

    class TimesOut(Flaky):
        def complete(self, request):
            self.requests += 1
            raise ProviderError(
                ErrorKind.TRANSIENT, "timed out", provider="fake", outcome_unknown=True
            )

    calls = calls_over(TimesOut(failures=0), RetryPolicy(max_attempts=2, backoff_base_s=0))

    with pytest.raises(ProviderError):
        calls(REQUEST)

    worst = estimate_worst_case(REQUEST.prompt, ROUTE, price)
    assert [amount for _, amount in calls.records.closed] == [worst, worst]
    assert calls.budget.spent_run == 2 * worst


def test_a_call_whose_worst_case_cannot_fit_is_sent_on_its_cheaper_fallback() -> None:
    """An escalated call too dear for what the cap leaves goes out on the fallback route,
    logged as tier_fallback; the priced completion names the route it took."""
    cheaper = Route("mid", "fake", MODEL, 1000)
    dearer = Route("frontier", "fake", "claude-opus-5-5", 64000)
    request = CallRequest(dearer, REQUEST.prompt, "t1", "fix", 3, (cheaper,))
    provider = Flaky(failures=0)
    calls = calls_over(provider, FAST, cap="0.5")

    with capture_logs() as logs:
        priced = calls.caller.call(request)

    fallback = [e for e in logs if e["event"] == "tier_fallback"]
    assert (priced.route, provider.requests) == (cheaper, 1)
    assert [(e["wanted_tier"], e["tier"]) for e in fallback] == [("frontier", "mid")]
    assert not calls.budget.stopped
