"""The values of the paid-call layer (its log, its result, its stop) and one try's pieces:
its worst case, its record when it failed, its log line."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import structlog

from harness.budget import estimate_worst_case
from harness.llm import (
    CallRequest,
    Completion,
    Provider,
    ProviderError,
    RecordedReply,
    Route,
    ServiceTier,
    StopReason,
    Usage,
)
from harness.pricing import MILLION, Price
from harness.results import StopCause

__all__ = [
    "CallLog",
    "PricedCompletion",
    "RunStopped",
    "failed_try",
    "log_call",
    "reserve_price",
    "tool_input_tokens",
    "worst_case",
]

log = structlog.get_logger()


class RunStopped(Exception):
    """The run is stopping (a signal, or a halt): no new calls are made. `cause` says which."""

    def __init__(self, message: str, cause: StopCause = StopCause.RUN_STOPPED) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class PricedCompletion:
    """A completion, what the call cost in all (failed tries included), and the route it
    was sent on: the request's own, or a cheaper fallback the budget could fit."""

    completion: Completion
    cost_usd: Decimal
    route: Route


class CallLog(Protocol):
    """Where calls are recorded as they happen (the run store, the run folder)."""

    def open_call(self, request: CallRequest, reserved_usd: Decimal) -> Any: ...

    def close_call(self, handle: Any, completion: Completion, cost_usd: Decimal) -> None: ...

    def recorded(self, request: CallRequest) -> RecordedReply | None:
        """The reply this run already paid for to this very request, if it has one."""
        ...


def worst_case(request: CallRequest, price: Price, provider: Provider) -> Decimal:
    """The most one try can cost, over every request the provider may make for it.

    A provider that follows continuations (`requests_per_call` > 1) re-sends the prompt
    plus what it has produced so far on each hop, so hop k may bill the prompt, k earlier
    outputs as input, and a full output of its own.
    """
    hops = provider.requests_per_call
    price = reserve_price(price, request.route.service_tier)
    dearest_input = max(price.input, price.cache_write, price.cache_read)
    one = estimate_worst_case(request.prompt, request.route, price)
    one += tool_input_tokens(request) * dearest_input / MILLION
    resent = request.route.max_tokens * dearest_input / MILLION
    return hops * one + resent * hops * (hops - 1) / 2


# The vendors' own tool-use system prompt (Anthropic documents 313-346 tokens for auto/none
# tool choice; Gemini folds declarations into the prompt): bounded generously per call.
TOOL_OVERHEAD_TOKENS = 1024


def tool_input_tokens(request: CallRequest) -> int:
    """An upper bound on the input a request's tools and earlier rounds add (bytes bound
    tokens, as for the prompt); 0 when it offers no tools."""
    if not request.tools and not request.rounds:
        return 0
    size = sum(len(t.name) + len(t.description) + len(t.schema_json) for t in request.tools)
    for done in request.rounds:
        size += len(done.turn.encode("utf-8"))
        size += sum(len(r.content.encode("utf-8")) + len(r.call_id) + 64 for r in done.results)
    return size + TOOL_OVERHEAD_TOKENS


def reserve_price(price: Price, tier: ServiceTier) -> Price:
    """The price a request's reservation is made at: a batch entry is billed at the batch
    price whatever happens; a flex request may be shed and served at the standard price,
    so it reserves the standard price (the list price is the most any tier here bills)."""
    return price.at(ServiceTier.BATCH) if tier is ServiceTier.BATCH else price


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
        service_tier=completion.service_tier.value,
        cost_usd=str(amount),
        latency_s=round(completion.latency_s, 3),
    )
