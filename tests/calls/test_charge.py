"""The cap bounds what the provider can bill: seeded random nights of timeouts, dropped
connections, cut streams, gateway timeouts and garbled answers, through the real SDKs against
the fake server, which counts what it billed for every request it read."""

from __future__ import annotations

import random
import socket
from dataclasses import replace
from decimal import Decimal

import pytest

from harness.budget import BudgetExceeded
from harness.calls import RetryPolicy
from harness.llm import CallRequest, Prompt, ProviderError, Route, Usage
from harness.pricing import cost
from harness.providers.anthropic import AnthropicProvider
from harness.providers.gemini import GeminiProvider
from tests.conftest import calls_over, fixture_prices
from tests.fakeserver import (
    FakeLLMServer,
    Reply,
    anthropic_error,
    anthropic_sse,
    gemini_error,
    gemini_reply,
    json_reply,
)

pytestmark = pytest.mark.slow

PRICES = fixture_prices()
MODELS = {"anthropic": "claude-sonnet-5-5", "gemini": "gemini-3.8-flash"}
PROMPT = Prompt("You port code.", "REFERENCE " * 40, "FAILING TESTS " * 10)
PROMPT_BYTES = len((PROMPT.system + PROMPT.stable + PROMPT.variable).encode())
TIMEOUT_S = 0.2
LATE_S = 0.5  # the answer (and the bill) comes after the client gave up
RETRY = RetryPolicy(max_attempts=3, backoff_base_s=0, backoff_max_s=0)
TEXT = "```python\ndef handle():\n    return 1\n```\n"
FAULTS = ("ok", "late", "drop", "cut", "overloaded", "gateway_timeout", "garbled")


def _answer(provider: str, rng: random.Random, max_tokens: int) -> Reply:
    """A full answer billing up to the prompt's bytes in and max_tokens out, as a vendor can."""
    fresh, out = rng.randint(1, PROMPT_BYTES), rng.randint(1, max_tokens)
    if provider == "anthropic":
        return anthropic_sse(TEXT, model=MODELS[provider], input_tokens=fresh, output_tokens=out)
    return gemini_reply(TEXT, model_version=MODELS[provider], prompt=fresh, candidates=out)


def _reply(provider: str, rng: random.Random, max_tokens: int) -> tuple[str, Reply]:
    """One scripted reply with a random fault; the fault's name for the failure message."""
    fault, answer = rng.choice(FAULTS), _answer(provider, rng, max_tokens)
    if fault == "late":
        return fault, replace(answer, delay_s=LATE_S)
    if fault == "drop":  # the request was read (and billed); the connection closes unanswered
        return fault, replace(answer, drop=True)
    if fault == "cut":
        if provider == "anthropic":
            events = answer.chunks or []
            return fault, replace(
                answer, chunks=events[: rng.randint(0, len(events) - 1)], cut=True
            )
        return fault, replace(answer, chunks=[answer.body[: rng.randint(1, 40)]], cut=True)
    if fault == "overloaded":  # the vendor refused it: nothing billed
        if provider == "anthropic":
            return fault, anthropic_error(529, "overloaded_error")
        return fault, gemini_error(503, "UNAVAILABLE")
    if fault == "gateway_timeout":  # the gateway lost the vendor's (billed) answer
        return fault, replace(
            json_reply({"error": "upstream timed out"}, status=504), bill=answer.bill
        )
    if fault == "garbled":  # a 200 whose body cannot be read: billed, by an unknown amount
        return fault, Reply(body=b'{"candidates": [', bill=answer.bill)
    return fault, answer


def _provider(provider: str, url: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    if provider == "anthropic":
        for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_PROFILE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        return AnthropicProvider("sk-ant-fake", timeout_s=TIMEOUT_S)
    for name in ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)
    return GeminiProvider("AIza-fake", timeout_s=TIMEOUT_S)


@pytest.mark.parametrize("seed", range(24))
def test_provider_bill_never_exceeds_the_cap_nor_the_reported_spend(seed, monkeypatch) -> None:
    """Whatever faults a night meets, the provider's bill stays under the cap, and the spend
    the harness reports is never below that bill."""
    rng = random.Random(seed)
    provider = ("anthropic", "gemini")[seed % 2]
    max_tokens = rng.randint(300, 3000)
    cap = Decimal(rng.choice(["0.02", "0.05", "0.1", "0.2"]))
    route = Route("mid", provider, MODELS[provider], max_tokens)
    request = CallRequest(route, PROMPT, "orders", "fix", 1)
    with FakeLLMServer() as server:
        # The night's first call is answered: a night that never gets a usable reply halts
        # after its first failed call (tested in tests/e2e), and every fault here is met.
        script = [("ok", _answer(provider, rng, max_tokens))]
        script += [_reply(provider, rng, max_tokens) for _ in range(14)]
        server.script(*(reply for _, reply in script))
        calls = calls_over(_provider(provider, server.url, monkeypatch), RETRY, cap=str(cap))
        for _ in range(len(script)):
            try:
                calls(request)
            except BudgetExceeded:
                break
            except ProviderError:
                continue
        bills = list(server.bills)

    price = PRICES.get(MODELS[provider])
    billed = sum((cost(Usage(*tokens), price) for _, tokens in bills), Decimal(0))
    faults = [fault for fault, _ in script[: len(server.requests)]]
    assert billed <= cap, (faults, billed, cap)
    assert calls.budget.spent_run >= billed, (faults, calls.budget.spent_run, billed)
    assert calls.budget.spent_run <= cap
    assert not calls.records.open


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_a_request_that_never_left_is_charged_nothing(provider, monkeypatch) -> None:
    """Connection refused: the vendor never saw the request, so no try is charged."""
    route = Route("mid", provider, MODELS[provider], 1000)
    calls = calls_over(_provider(provider, _closed_port(), monkeypatch), RETRY)

    with pytest.raises(ProviderError) as caught:
        calls(CallRequest(route, PROMPT, "orders", "fix", 1))

    assert (caught.value.outcome_unknown, calls.budget.spent_run) == (False, 0)
    assert len(calls.records.closed) == RETRY.max_attempts
