"""RetryingProvider: the one retry policy, driven by a scripted Provider (no network)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from structlog.testing import capture_logs

from harness.providers import AccountError, RetryingProvider, RetryPolicy
from harness.providers._errors import with_billed_usage
from harness.providers.base import (
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

SECRET_PROMPT = "SECRET PROMPT TEXT"
REQUEST = CallRequest(
    Route("mid", "scripted", "model-x", 1000),
    Prompt("system", SECRET_PROMPT, "tail"),
    "orders",
    "write",
    3,
)
OK = Completion("ok", Usage(10, 0, 0, 5), StopReason.END, "model-x", "scripted")


class Scripted:
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


def transient(retry_after_s: float | None = None) -> ProviderError:
    return ProviderError(ErrorKind.TRANSIENT, "overloaded", 529, retry_after_s, "scripted")


def rate_limited(retry_after_s: float | None = None) -> ProviderError:
    return ProviderError(ErrorKind.RATE_LIMIT, "slow down", 429, retry_after_s, "scripted")


def retrying(
    outcomes, policy: RetryPolicy | None = None
) -> tuple[RetryingProvider, Scripted, list[float]]:
    inner, waits = Scripted(outcomes), []
    policy = policy or RetryPolicy(max_attempts=4, max_wait_s=30, backoff_base_s=1, backoff_max_s=8)
    return RetryingProvider(inner, policy, sleep=waits.append), inner, waits


def test_is_a_provider_with_the_inner_name():
    """RetryingProvider satisfies the Provider protocol and keeps the inner name."""
    provider, _, _ = retrying([OK])

    assert (isinstance(provider, Provider), provider.name) == (True, "scripted")


def test_success_passes_through_untouched():
    """A first-time success is returned as is, with retries 0 and no sleep."""
    provider, inner, waits = retrying([OK])

    assert (provider.complete(REQUEST), inner.calls, waits) == (OK, 1, [])


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
    provider, inner, waits = retrying([error, OK])

    with pytest.raises(ProviderError) as caught:
        provider.complete(REQUEST)

    assert (error, 1, []) == (caught.value, inner.calls, waits)


def test_unknown_exceptions_are_not_retried():
    """A bug (not a ProviderError) propagates at once: retrying would hide it."""
    provider, inner, _ = retrying([KeyError("oops"), OK])

    with pytest.raises(KeyError):
        provider.complete(REQUEST)

    assert inner.calls == 1


def test_server_hint_is_used_and_capped():
    """retry_after_s is waited as given, and never longer than max_wait_s."""
    provider, _, waits = retrying([rate_limited(0.5), rate_limited(999.0), transient(2.0), OK])

    provider.complete(REQUEST)

    assert waits == [0.5, 30, 2.0]


def test_backoff_without_hint_grows_with_jitter_and_is_capped():
    """Without a hint the wait doubles from the base (plus jitter) up to backoff_max_s."""
    provider, _, waits = retrying(
        [transient()] * 6 + [OK],
        RetryPolicy(max_attempts=7, max_wait_s=100, backoff_base_s=1, backoff_max_s=8),
    )

    provider.complete(REQUEST)

    lows = [1, 2, 4, 8, 8, 8]
    assert all(low <= wait <= min(low + 1, 8) for low, wait in zip(lows, waits, strict=True)), waits


def test_attempts_are_bounded():
    """After max_attempts the last error is raised, stamped with the retries made."""
    provider, inner, waits = retrying([transient()] * 10)

    with pytest.raises(ProviderError) as caught:
        provider.complete(REQUEST)

    assert (inner.calls, len(waits), caught.value.extra["retries"]) == (4, 3, "3")


def test_total_time_is_bounded():
    """No retry starts if its wait would pass max_total_s."""
    provider, inner, waits = retrying(
        [rate_limited(10.0), OK], RetryPolicy(max_attempts=5, max_total_s=5, max_wait_s=60)
    )

    with pytest.raises(ProviderError):
        provider.complete(REQUEST)

    assert (inner.calls, waits) == (1, [])


def test_retries_are_counted_and_logged_without_prompt_text():
    """Each retry logs call_retry (reason, wait, attempt); the completion counts them."""
    provider, _, _ = retrying([rate_limited(0.25), transient(0.5), OK])

    with capture_logs() as logs:
        completion = provider.complete(REQUEST)

    events = [e for e in logs if e["event"] == "call_retry"]
    assert completion.retries == 2
    assert [(e["reason"], e["wait_s"], e["retry"], e["attempt"], e["status"]) for e in events] == [
        ("rate_limit", 0.25, 1, 3, 429),
        ("transient", 0.5, 2, 3, 529),
    ]
    assert all(e["task_id"] == "orders" and e["step"] == "write" for e in events)
    assert not [e for e in logs if SECRET_PROMPT in repr(e)]


def test_exhaustion_is_logged():
    """Giving up on a retryable fault leaves one call_retries_exhausted event."""
    provider, _, _ = retrying([transient(0.0)] * 4)

    with capture_logs() as logs, pytest.raises(ProviderError):
        provider.complete(REQUEST)

    assert [e["retries"] for e in logs if e["event"] == "call_retries_exhausted"] == [3]


def test_tokens_billed_by_failed_tries_are_added_to_the_completion():
    """Usage billed before a retried fault is added to the final completion's usage."""
    cut = with_billed_usage(transient(0.0), Usage(100, 50, 0, 7))
    provider, _, _ = retrying([cut, OK])

    assert Usage(110, 50, 0, 12) == provider.complete(REQUEST).usage


def test_tokens_billed_by_every_failed_try_are_on_the_final_error():
    """When retries run out, the error carries the billed usage of all failed tries."""
    tries = [with_billed_usage(transient(0.0), Usage(100, 0, 0, i)) for i in (1, 2)]
    provider, _, _ = retrying(tries, RetryPolicy(max_attempts=2))

    with pytest.raises(ProviderError) as caught:
        provider.complete(REQUEST)

    extra = caught.value.extra
    assert (extra["billed_input_tokens"], extra["billed_output_tokens"]) == ("200", "3")


@pytest.mark.parametrize("field", ["max_total_s", "max_wait_s", "backoff_base_s", "backoff_max_s"])
def test_policy_rejects_negative_times(field):
    """A negative time in RetryPolicy is refused at construction."""
    with pytest.raises(ValueError, match=field):
        RetryPolicy(**{field: -1})


def test_policy_needs_one_attempt():
    """max_attempts below 1 is refused at construction."""
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
