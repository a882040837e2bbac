"""One try of a paid call: its worst case, its record when it failed, its log line."""

from __future__ import annotations

from decimal import Decimal

import structlog

from harness.budget import estimate_worst_case
from harness.pricing import MILLION, Price
from harness.providers.base import (
    CallRequest,
    Completion,
    Provider,
    ProviderError,
    StopReason,
    Usage,
)

__all__ = ["failed_try", "log_call", "worst_case"]

log = structlog.get_logger()


def worst_case(request: CallRequest, price: Price, provider: Provider) -> Decimal:
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


def failed_try(request: CallRequest, exc: ProviderError | None) -> Completion:
    """A failed try as a record: no text, the usage billed before it failed."""
    usage = exc.billed if exc is not None else Usage()
    detail = str(exc) if exc is not None else "the call raised outside the provider contract"
    route = request.route
    return Completion("", usage, StopReason.ERROR, route.model, route.provider, detail=detail)


def log_call(request: CallRequest, completion: Completion, amount: Decimal) -> None:
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
