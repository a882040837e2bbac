"""The one retry policy, as every paid call runs it (Caller), driven by a scripted Provider."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from decimal import Decimal

import pytest
import structlog
from structlog.testing import capture_logs

from harness.budget import Budget
from harness.calls import RetryPolicy
from harness.calls.caller import Caller, RunStopped
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
from harness.providers import AccountError
from tests.conftest import CallRecords, Calls, calls_over, fixture_prices

SECRET_PROMPT = "SECRET PROMPT TEXT"
MODEL = "claude-sonnet-5-5"  # any priced model: the Caller prices every try
REQUEST = CallRequest(
    Route("mid", "scripted", MODEL, 1000),
    Prompt("system", SECRET_PROMPT, "tail"),
    "orders",
    "write",
    3,
)
OK = Completion("ok", Usage(10, 0, 0, 5), StopReason.END, MODEL, "scripted")
UNBILLED = Usage()


class Scripted(Provider):
    """A Provider that plays back completions and errors, counting calls."""

    name = "scripted"

    def __init__(self, outcomes: Iterable[Completion | BaseException]) -> None:
        self._outcomes = list(outcomes)
        self.calls = 0

    def complete(self, request: CallRequest) -> Completion:
        outcome = self._outcomes[self.calls]
        self.calls += 1
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def transient(retry_after_s: float | None = None, billed: Usage = UNBILLED) -> ProviderError:
    return ProviderError(ErrorKind.TRANSIENT, "overloaded", 529, retry_after_s, "scripted", billed)


def rate_limited(retry_after_s: float | None = None) -> ProviderError:
    return ProviderError(ErrorKind.RATE_LIMIT, "slow down", 429, retry_after_s, "scripted")


def retrying(outcomes, policy: RetryPolicy | None = None) -> tuple[Calls, Scripted]:
    inner = Scripted(outcomes)
    policy = policy or RetryPolicy(max_attempts=4, max_wait_s=30, backoff_base_s=1, backoff_max_s=8)
    return calls_over(inner, policy), inner


def test_success_passes_through_untouched():
    """A first-time success is returned as is, with retries 0 and no wait."""
    calls, inner = retrying([OK])

    assert (calls(REQUEST), inner.calls, calls.waits) == (OK, 1, [])


@pytest.mark.parametrize(
    "error",
    [
        ProviderError(ErrorKind.FATAL, "bad request", 400, provider="scripted"),
        AuthenticationError(ErrorKind.AUTH, "bad key", 401, provider="scripted"),
        AccountError(ErrorKind.AUTH, "no money", 402, provider="scripted"),
        AuthenticationError(ErrorKind.TRANSIENT, "mislabelled auth", 401, provider="scripted"),
    ],
)
def test_fatal_and_auth_are_never_retried(error):
    """FATAL and AUTH (any AuthenticationError) raise after exactly one call."""
    calls, inner = retrying([error, OK])

    with pytest.raises(ProviderError) as caught:
        calls(REQUEST)

    assert (error, 1, []) == (caught.value, inner.calls, calls.waits)


def test_unknown_exceptions_are_not_retried():
    """A bug (not a ProviderError) propagates at once: retrying would hide it."""
    calls, inner = retrying([KeyError("oops"), OK])

    with pytest.raises(KeyError):
        calls(REQUEST)

    assert inner.calls == 1


def test_server_hint_is_used_and_capped():
    """retry_after_s is waited as given, and never longer than max_wait_s."""
    calls, _ = retrying([rate_limited(0.5), rate_limited(999.0), transient(2.0), OK])

    calls(REQUEST)

    assert calls.waits == [0.5, 30, 2.0]


def test_backoff_without_hint_grows_with_jitter_and_is_capped():
    """Without a hint the wait doubles from the base (plus jitter) up to backoff_max_s."""
    calls, _ = retrying(
        [transient()] * 6 + [OK],
        RetryPolicy(max_attempts=7, max_wait_s=100, backoff_base_s=1, backoff_max_s=8),
    )

    calls(REQUEST)

    lows = [1, 2, 4, 8, 8, 8]
    waits = calls.waits
    assert all(low <= wait <= min(low + 1, 8) for low, wait in zip(lows, waits, strict=True)), waits


def test_attempts_are_bounded():
    """After max_attempts the last error is raised, and the log says how many retries ran."""
    calls, inner = retrying([transient()] * 10)

    with capture_logs() as logs, pytest.raises(ProviderError):
        calls(REQUEST)

    exhausted = [e["retries"] for e in logs if e["event"] == "call_retries_exhausted"]
    assert (inner.calls, len(calls.waits), exhausted) == (4, 3, [3])


def test_total_time_is_bounded():
    """No retry starts if its wait would pass max_total_s."""
    calls, inner = retrying(
        [rate_limited(10.0), OK], RetryPolicy(max_attempts=5, max_total_s=5, max_wait_s=60)
    )

    with pytest.raises(ProviderError):
        calls(REQUEST)

    assert (inner.calls, calls.waits) == (1, [])


def test_retries_are_counted_and_logged_without_prompt_text():
    """Each retry logs call_retry (reason, wait, attempt); the completion counts them."""
    calls, _ = retrying([rate_limited(0.25), transient(0.5), OK])

    with capture_logs() as logs:
        completion = calls(REQUEST)

    events = [e for e in logs if e["event"] == "call_retry"]
    assert completion.retries == 2
    assert [(e["reason"], e["wait_s"], e["retry"], e["attempt"], e["status"]) for e in events] == [
        ("rate_limit", 0.25, 1, 3, 429),
        ("transient", 0.5, 2, 3, 529),
    ]
    assert all(e["task_id"] == "orders" and e["step"] == "write" for e in events)
    assert not [e for e in logs if SECRET_PROMPT in repr(e)]


def test_a_fault_that_is_not_retried_logs_no_exhaustion():
    """call_retries_exhausted is for retryable faults that outlasted the policy, not a 400."""
    calls, _ = retrying([ProviderError(ErrorKind.FATAL, "bad", 400, provider="scripted")])

    with capture_logs() as logs, pytest.raises(ProviderError):
        calls(REQUEST)

    assert [e for e in logs if e["event"] == "call_retries_exhausted"] == []


def test_tokens_billed_by_every_failed_try_are_settled_when_retries_run_out():
    """Each failed try is recorded with its own billed usage; the budget is charged for all."""
    price = fixture_prices().get(MODEL)
    billed = [Usage(100, 0, 0, i) for i in (1, 2)]
    calls, _ = retrying([transient(0.0, b) for b in billed], RetryPolicy(max_attempts=2))

    with pytest.raises(ProviderError):
        calls(REQUEST)

    assert [c.usage for c, _ in calls.records.closed] == billed
    assert calls.budget.spent_run == sum(cost(b, price) for b in billed)


@pytest.mark.parametrize("field", ["max_total_s", "max_wait_s", "backoff_base_s", "backoff_max_s"])
def test_policy_rejects_negative_times(field):
    """A negative time in RetryPolicy is refused at construction."""
    with pytest.raises(ValueError, match=field):
        RetryPolicy(**{field: -1})


def test_policy_needs_one_attempt():
    """max_attempts below 1 is refused at construction."""
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_a_retry_wait_ends_as_soon_as_the_run_stops():
    """A rate limit asking for a long wait is waited out only until the run stops (a signal,
    a halt): then the call ends at once as stopped, with no further try."""
    stop, outcome = threading.Event(), []
    provider = Scripted([rate_limited(retry_after_s=86400), OK])
    budget = Budget(cap_run=Decimal(10))
    caller = Caller({"scripted": provider}, fixture_prices(), budget, CallRecords(),
                    stop=stop, retry=RetryPolicy(max_wait_s=1000))  # fmt: skip

    def stop_before_the_wait(_logger: object, _name: str, event: dict) -> dict:
        if event["event"] == "call_retry":  # logged after the stop check, before the wait
            stop.set()
        raise structlog.DropEvent

    def call() -> None:
        try:
            caller.call(REQUEST)
        except RunStopped as exc:
            outcome.append(exc)

    saved = structlog.get_config()
    structlog.configure(processors=[stop_before_the_wait])
    try:
        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(timeout=60)  # a guard against a day's sleep, not a measurement
    finally:
        structlog.configure(**saved)

    assert (worker.is_alive(), len(outcome), provider.calls) == (False, 1, 1)
