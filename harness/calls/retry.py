"""The one retry policy: the tenacity loop Caller runs each call in, driven by ProviderError.kind.

RATE_LIMIT and TRANSIENT are retried; FATAL and AUTH never are. A server's wait hint
(`retry-after-ms`, `retry-after`, Google's RetryInfo) is honoured up to `max_wait_s`;
otherwise the wait is exponential with jitter. Attempts and total time are both bounded.
The SDKs' own retries are off, so every retry is here: logged and counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog
import tenacity

from harness.llm import AuthenticationError, CallRequest, ErrorKind, ProviderError

__all__ = ["RetryPolicy", "is_retryable", "log_exhausted", "retrying"]

log = structlog.get_logger()

_RETRYABLE = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds for retrying one call (all in seconds except `max_attempts`)."""

    max_attempts: int = 5  # tries in all, the first one included
    max_total_s: float = 1800.0  # no new try would start after this long since the first
    max_wait_s: float = 120.0  # cap on any single wait, a server's retry-after included
    backoff_base_s: float = 2.0  # first transient wait (then doubling, with jitter)
    backoff_max_s: float = 60.0  # cap on the exponential backoff

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        for name in ("max_total_s", "max_wait_s", "backoff_base_s", "backoff_max_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")


def retrying(
    policy: RetryPolicy,
    request: CallRequest,
    *,
    sleep: Callable[[float], object] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
) -> tenacity.Retrying:
    """The tenacity loop for one call under `policy`.

    `stop` is asked before every wait: once the run is stopping no further try is made.
    """
    backoff = tenacity.wait_exponential_jitter(
        initial=policy.backoff_base_s, max=policy.backoff_max_s, jitter=policy.backoff_base_s
    )

    def wait(state: tenacity.RetryCallState) -> float:
        """The server's hint when it gave one, else exponential backoff; never over the cap."""
        exc = state.outcome.exception() if state.outcome else None
        hint = exc.retry_after_s if isinstance(exc, ProviderError) else None
        return min(hint if hint is not None else backoff(state), policy.max_wait_s)

    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(policy.max_attempts)
        | tenacity.stop_before_delay(policy.max_total_s)
        | (lambda _state: stop()),
        wait=wait,
        retry=tenacity.retry_if_exception(is_retryable),
        before_sleep=lambda state: _log_retry(request, state),
        sleep=sleep,
        reraise=True,
    )


def log_exhausted(request: CallRequest, exc: ProviderError, loop: tenacity.Retrying) -> None:
    """Log, with how many retries ran, when a retryable fault outlasted the policy."""
    if is_retryable(exc):
        retries = loop.statistics.get("attempt_number", 1) - 1
        log.warning(
            "call_retries_exhausted",
            **_where(request),
            retries=retries,
            reason=exc.kind.value,
            status=exc.status,
        )


def is_retryable(exc: BaseException) -> bool:
    """A fault the one retry policy tries again (rate limits, transient faults; never auth)."""
    return (
        isinstance(exc, ProviderError)
        and not isinstance(exc, AuthenticationError)
        and exc.kind in _RETRYABLE
    )


def _where(request: CallRequest) -> dict[str, object]:
    """Which call this is, for logs: never any prompt text."""
    return {
        "provider": request.route.provider,
        "model": request.route.model,
        "task_id": request.task_id,
        "step": request.step,
        "attempt": request.attempt,
    }


def _log_retry(request: CallRequest, state: tenacity.RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    assert isinstance(exc, ProviderError)
    log.warning(
        "call_retry",
        **_where(request),
        retry=state.attempt_number,
        reason=exc.kind.value,
        status=exc.status,
        wait_s=round(state.upcoming_sleep, 3),
        error=exc.message[:200],
    )
