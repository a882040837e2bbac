"""The worst case one call can cost: what the budget reserves before the call is made."""

from __future__ import annotations

from decimal import Decimal

from harness.llm import Prompt, Route
from harness.pricing import MILLION, Price

__all__ = ["FRAMING_TOKENS", "estimate_worst_case"]

# Role markers and system-prompt wrapping that vendors add around the text we send.
FRAMING_TOKENS = 256


def estimate_worst_case(prompt: Prompt, route: Route, price: Price) -> Decimal:
    """An upper bound on one call's cost, reserved before the call.

    Input tokens are bounded by the prompt's UTF-8 byte count: byte-level BPE (Claude, GPT)
    and SentencePiece with byte fallback (Gemini) emit at least one byte per token, so no
    text tokenizes into more tokens than bytes (chars/2 is not a bound: an emoji is one
    char and several tokens). FRAMING_TOKENS covers the vendor's message wrapping. Input is
    priced at the dearest input price (fresh, cache write or cache read: any split of the
    prompt between them costs no more); output is the route's max_tokens (which bounds
    thinking too) at the output price.
    """
    parts = (prompt.system, prompt.stable, prompt.variable)
    input_tokens = sum(len(part.encode("utf-8")) for part in parts) + FRAMING_TOKENS
    input_price = max(price.input, price.cache_write, price.cache_read)
    return (input_tokens * input_price + route.max_tokens * price.output) / MILLION
