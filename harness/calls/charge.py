"""What an answered try is charged: its reported usage at the price of the model that
answered, unless the report cannot be true, when it is charged its whole reservation.

A vendor's (or gateway's) usage report is untrusted input. Negative counts, more output than
`max_tokens` allows, or a reply with text and no tokens are not what the vendor billed, and
pricing them as they stand would settle a negative amount (a crash that leaks the
reservation), $0, or millions that lock the day ledger for every run on the machine. The
reservation is the most such a try can have cost on the model that was asked for, so it is
what the try is charged. A reply from another model than the route's is priced as that
model (it is what the vendor bills): a gateway that swaps a dearer model in is not hidden.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from decimal import Decimal

import structlog

from harness.llm import (
    CallRequest,
    Completion,
    Provider,
    ProviderError,
    Route,
    StopReason,
    Usage,
)
from harness.pricing import Price, PriceError, PriceTable, cost

__all__ = ["Charge", "charge", "charge_answer", "charge_failure", "implausible", "served_price"]

log = structlog.get_logger()


@dataclass(frozen=True)
class Charge:
    """What a try costs, and why it is not its reported usage's price ("" when it is)."""

    amount: Decimal
    problem: str = ""


def served_price(prices: PriceTable, asked: Price, served: str, provider: str = "") -> Price | None:
    """The price of the model that answered, by its id or a dated or versioned one (such as
    `claude-sonnet-5-5-20260928`), the most specific priced name first (an answer from
    `claude-opus-5-5-...` to a `claude-opus-5` request is Opus 5.5's), as `provider` prices
    it (an endpoint's own rows first); None if unpriced."""
    name = served.removeprefix("models/")
    if not name or name == asked.model:
        return asked
    rows = prices.rows(provider)
    known = [m for m in rows if name == m or name.startswith(f"{m}-")]
    return rows[max(known, key=len)] if known else None


def charge(
    completion: Completion,
    route: Route,
    prices: PriceTable,
    worst: Decimal,
    requests: int = 1,
) -> Charge:
    """The amount to settle for `completion`, answered to a request on `route` that reserved
    `worst` and could make up to `requests` requests (continuation hops)."""
    asked = prices.get(route.model, route.pricing)
    price = served_price(prices, asked, completion.model, route.pricing)
    if price is None:
        return Charge(worst, f"answered by model {completion.model!r}, which has no price")
    problem = implausible(completion, route.max_tokens * requests)
    if problem:
        return Charge(worst, problem)
    try:
        amount = cost(completion.usage, price.at(completion.service_tier))
    except PriceError as exc:
        return Charge(worst, str(exc))
    if price is asked and amount > worst:
        return Charge(worst, f"usage priced at ${amount:f}, over the most the call can cost")
    return Charge(amount)


def implausible(completion: Completion, max_output: int) -> str:
    """Why `completion`'s usage cannot be what the vendor billed, or "" when it can be."""
    usage = completion.usage
    counts = {f.name: getattr(usage, f.name) for f in dataclasses.fields(Usage)}
    bad = [k for k, v in counts.items() if type(v) is not int or v < 0]
    if bad:
        return f"token counts that are not whole non-negative numbers ({', '.join(bad)})"
    if usage.output_tokens > max_output:
        return f"{usage.output_tokens} output tokens reported, max_tokens allows {max_output}"
    inputs = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    if completion.text and (usage.output_tokens == 0 or inputs == 0):
        return "a reply with no input or output tokens reported"
    return ""


def charge_answer(
    completion: Completion,
    request: CallRequest,
    prices: PriceTable,
    worst: Decimal,
    provider: Provider,
) -> Charge:
    """`charge` for an answered try of the paid-call layer, logged when it is not the
    reported usage's price on the route's model."""
    billed = charge(completion, request.route, prices, worst, provider.requests_per_call)
    if billed.problem or completion.model != request.route.model:
        log.warning(
            "call_usage_implausible" if billed.problem else "call_model_differs",
            step=request.step,
            attempt=request.attempt,
            asked_model=request.route.model,
            model=completion.model,
            problem=billed.problem,
            charged_usd=str(billed.amount),
        )
    return billed


def charge_failure(
    exc: ProviderError, request: CallRequest, price: Price, worst: Decimal, provider: Provider
) -> Decimal:
    """A failed try's charge. One whose outcome is unknown (it may have reached the vendor:
    a timeout, a dropped connection, a cut stream) is charged its whole reservation, the
    most the vendor can bill for it, so the cap bounds the vendor's bill; so is one whose
    billed usage cannot be true (that report is then dropped from `exc`); any other failure,
    the usage the vendor reported before it failed (usually nothing)."""
    max_output = request.route.max_tokens * provider.requests_per_call
    record = Completion("", exc.billed, StopReason.ERROR, request.route.model, exc.provider)
    problem = implausible(record, max_output)
    if problem:
        exc.billed = Usage()  # not a bill: kept out of the records, charged as below
    reported = cost(exc.billed, price)
    if not (exc.outcome_unknown or problem):
        return reported
    amount = worst if problem else max(worst, reported)
    log.warning(
        "call_outcome_unknown",
        step=request.step,
        attempt=request.attempt,
        provider=request.route.provider,
        error=exc.message[:200],
        problem=problem,
        reported_usd=str(reported),
        charged_usd=str(amount),
    )
    return amount
