"""Opt-in smoke test against the real APIs: one tiny, cheap call per live provider.

Skipped unless HARNESS_LIVE_TESTS=1 and the provider's key is set. Costs a fraction of a
cent. Override the models with HARNESS_LIVE_ANTHROPIC_MODEL / HARNESS_LIVE_GEMINI_MODEL.
"""

from __future__ import annotations

import os
import time

import pytest

from harness.calls import RetryPolicy
from harness.llm import CallRequest, Prompt, Route, StopReason
from harness.pricing import cost, load_prices
from harness.providers import build_adapter
from tests.conftest import calls_over

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        os.environ.get("HARNESS_LIVE_TESTS") != "1",
        reason="live API test: set HARNESS_LIVE_TESTS=1 and the keys to run",
    ),
]

CASES = [
    ("anthropic", ("ANTHROPIC_API_KEY",), "HARNESS_LIVE_ANTHROPIC_MODEL", "claude-haiku-5-5"),
    (
        "gemini",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "HARNESS_LIVE_GEMINI_MODEL",
        "gemini-3.8-flash",
    ),
]


@pytest.mark.parametrize(("provider", "keys", "override", "default"), CASES)
def test_one_real_call_is_parsed_and_priced(provider, keys, override, default):
    """A real call returns text, a known stop reason and usage that prices above $0."""
    if not any(os.environ.get(k) for k in keys):
        pytest.skip(f"set {' or '.join(keys)} to run the {provider} smoke test")
    model = os.environ.get(override, default)
    adapter = build_adapter(provider, timeout_s=120)
    live = calls_over(adapter, RetryPolicy(max_attempts=3), sleep=time.sleep)
    prompt = Prompt("Answer with one word.", "Reply with the word: pong.", "")

    completion = live(
        CallRequest(Route("smoke", provider, model, 1024), prompt, "smoke", "review", 1)
    )

    assert completion.stop_reason in (StopReason.END, StopReason.MAX_TOKENS)
    assert completion.usage.input_tokens + completion.usage.cache_read_tokens > 0
    assert completion.usage.output_tokens > 0
    assert cost(completion.usage, load_prices().get(model)) > 0
