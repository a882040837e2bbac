"""What an answered try is charged (providers/_charge): a usage report that cannot be true
costs the reservation, never a negative amount, $0 or millions; another model's answer is
priced as that model. Driven through the Caller, and through the real SDKs on the wire."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from harness.budget import Budget
from harness.calls import RetryPolicy
from harness.calls.caller import Caller
from harness.calls.tries import worst_case
from harness.llm import (
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
from harness.providers.anthropic import AnthropicProvider
from harness.providers.gemini import GeminiProvider
from harness.store import RunParams, Store
from tests.conftest import calls_over, fixture_prices
from tests.fakeserver import FakeLLMServer, anthropic_sse, gemini_reply

PRICES = fixture_prices()
MODEL = "claude-sonnet-5-5"
ROUTE = Route("mid", "fake", MODEL, 1000)
REQUEST = CallRequest(ROUTE, Prompt("s", "stable " * 50, "variable"), "t1", "fix", 1)
FAST = RetryPolicy(max_attempts=2, backoff_base_s=0, backoff_max_s=0)


class Reports(Provider):
    """Answers every request with `text` and the given usage, as model `model`."""

    name = "fake"

    def __init__(self, usage: Usage, text: str = "ok", model: str = MODEL) -> None:
        self.usage, self.text, self.model = usage, text, model

    def complete(self, request: CallRequest) -> Completion:
        return Completion(self.text, self.usage, StopReason.END, self.model, "fake")


class FailsBilled(Provider):
    """Fails with a vendor's error status, reporting `billed` as already charged."""

    name = "fake"

    def __init__(self, billed: Usage) -> None:
        self.bill = billed

    def complete(self, request: CallRequest) -> Completion:
        raise ProviderError(ErrorKind.FATAL, "bad request", 400, provider="fake", billed=self.bill)


WORST = worst_case(REQUEST, PRICES.get(MODEL), Reports(Usage()))
COUNT = st.one_of(
    st.integers(min_value=-(10**15), max_value=10**15),
    st.integers(min_value=2**62),  # past what SQLite stores
    st.floats(allow_nan=True),
    st.none(),
    st.text(max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(st.builds(Usage, COUNT, COUNT, COUNT, COUNT), st.sampled_from(["", "ok"]))
def test_any_reported_usage_is_charged_between_zero_and_the_reservation(usage, text) -> None:
    """Whatever usage a reply claims, the try settles within [0, its reservation], the
    reservation is closed, and the spend never crosses a cap that fits one call."""
    calls = calls_over(Reports(usage, text), FAST, cap=str(WORST))

    calls(REQUEST)

    ((recorded, charged),) = calls.records.closed
    assert Decimal(0) <= charged <= WORST
    assert (calls.budget.reserved_run, calls.records.open) == (0, {})
    assert charged == WORST or recorded.usage == usage  # an untrue report is not kept


@pytest.mark.parametrize(
    "usage",
    [
        Usage(400, 0, -1_000_000, 10),  # negative cache reads
        Usage(400, 0, 0, 5000),  # more output than max_tokens (1000) allows
        Usage(0, 0, 0, 0),  # usage absent, reply present
        Usage(400, 0, 0, 0),  # output absent
        Usage(0, 0, 0, 10**12),  # absurd
    ],
)
def test_an_impossible_usage_report_is_charged_the_reservation(usage) -> None:
    """A usage report no real bill can match is charged the whole reservation, and said so."""
    calls = calls_over(Reports(usage), FAST)

    with capture_logs() as logs:
        calls(REQUEST)

    events = [e["event"] for e in logs]
    assert (calls.budget.spent_run, events[0]) == (WORST, "call_usage_implausible")


def test_a_plausible_usage_report_is_charged_its_price() -> None:
    """An ordinary report is priced as it stands, with nothing logged as implausible."""
    usage = Usage(400, 20, 30, 900)
    calls = calls_over(Reports(usage), FAST)

    with capture_logs() as logs:
        calls(REQUEST)

    assert cost(usage, PRICES.get(MODEL)) == calls.budget.spent_run
    assert "call_usage_implausible" not in [e["event"] for e in logs]


def test_a_failed_try_reporting_negative_billing_is_charged_and_closed() -> None:
    """An error whose billed usage is negative settles at the reservation: no crash, no
    reservation left held for other calls to wait on."""
    calls = calls_over(FailsBilled(Usage(0, 0, -5000, 0)), FAST)

    with pytest.raises(ProviderError):
        calls(REQUEST)

    assert (calls.budget.spent_run, calls.budget.reserved_run, calls.records.open) == (WORST, 0, {})


@pytest.mark.parametrize(
    ("served", "priced_as"),
    [
        ("claude-opus-5", "claude-opus-5"),  # a dearer model swapped in
        ("claude-haiku-4-5", "claude-haiku-4-5"),  # a cheaper one
        ("claude-sonnet-5-5-20260928", MODEL),  # the route's model under its dated id
        ("models/claude-sonnet-5-5", MODEL),
    ],
)
def test_a_reply_is_priced_as_the_model_that_answered(served, priced_as) -> None:
    """The vendor bills the model that answered, so that is the price charged."""
    usage = Usage(400, 0, 0, 900)
    calls = calls_over(Reports(usage, model=served), FAST)

    calls(REQUEST)

    assert cost(usage, PRICES.get(priced_as)) == calls.budget.spent_run


def test_a_dated_id_is_priced_as_its_most_specific_model() -> None:
    """`claude-opus-5-5-20260923` answering a `claude-opus-5` route is Opus 5.5, not Opus 5,
    though its id also starts with `claude-opus-5-`."""
    usage = Usage(400, 0, 0, 900)
    route = Route("frontier", "fake", "claude-opus-5", 1000)
    calls = calls_over(Reports(usage, model="claude-opus-5-5-20260923"), FAST)

    calls(CallRequest(route, REQUEST.prompt, "t1", "fix", 1))

    assert calls.budget.spent_run == cost(usage, PRICES.get("claude-opus-5-5"))


def test_a_reply_from_an_unpriced_model_is_charged_the_reservation() -> None:
    """A model with no price is never a silent $0 or the route's price: it costs the whole
    reservation."""
    calls = calls_over(Reports(Usage(400, 0, 0, 10), model="gpt-9"), FAST)

    calls(REQUEST)

    assert calls.budget.spent_run == WORST


@pytest.fixture
def wire(monkeypatch):
    """A fake server for both SDKs, their base URLs pointed at it."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    with FakeLLMServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        yield server


@pytest.mark.parametrize(
    ("provider", "model", "reply"),
    [
        ("anthropic", MODEL, anthropic_sse("x", cache_read=-1_000_000)),
        ("anthropic", MODEL, anthropic_sse("x", output_tokens=10**12)),
        ("gemini", "gemini-3.8-flash", gemini_reply("x", prompt=10, cached=-100_000)),
        ("gemini", "gemini-3.8-flash", gemini_reply("x", prompt=10, cached=10**9)),
    ],
)
def test_garbled_usage_on_the_wire_is_charged_the_reservation(wire, provider, model, reply):
    """Through the real SDKs: negative or absurd usage fields cost the reservation, within
    a cap that fits one call, and leave nothing held."""
    build = {"anthropic": AnthropicProvider, "gemini": GeminiProvider}[provider]
    adapter = build("key", timeout_s=5)
    request = CallRequest(Route("mid", provider, model, 1000), REQUEST.prompt, "t1", "fix", 1)
    worst = worst_case(request, PRICES.get(model), adapter)
    wire.script(reply)
    calls = calls_over(adapter, FAST, cap=str(worst))

    calls(request)

    assert (worst, 0) == (calls.budget.spent_run, calls.budget.reserved_run)


def test_a_dearer_model_on_the_wire_is_priced_as_itself(wire) -> None:
    """A gateway answering claude-opus-5 to a claude-sonnet-5-5 request is billed at Opus
    prices, and the harness charges that, not the Sonnet price it asked for."""
    wire.script(anthropic_sse("x", model="claude-opus-5", input_tokens=10, output_tokens=900))
    calls = calls_over(AnthropicProvider("key", timeout_s=5), FAST)
    route = Route("mid", "anthropic", MODEL, 1000)

    calls(CallRequest(route, REQUEST.prompt, "t1", "fix", 1))

    assert cost(Usage(10, 0, 0, 900), PRICES.get("claude-opus-5")) == calls.budget.spent_run


def test_an_absurd_report_is_recorded_in_the_run_store_without_its_numbers(tmp_path) -> None:
    """A count past what SQLite can hold neither crashes the run store's record nor leaves
    the call open: the call is closed at its reservation, with no usage kept."""
    store = Store.open(tmp_path / "harness.db")
    store.begin_run("r1", dt.datetime.now(dt.UTC), "live", None, RunParams())
    budget = Budget(cap_run=Decimal(1))
    caller = Caller(
        {"fake": Reports(Usage(400, 0, 0, 10**20))}, PRICES, budget, store.call_log("r1")
    )

    priced = caller.call(REQUEST)

    recorded = store.recorded_reply("r1", REQUEST)
    assert (priced.cost_usd, recorded.cost_usd, recorded.completion.usage) == (
        WORST,
        WORST,
        Usage(),
    )
