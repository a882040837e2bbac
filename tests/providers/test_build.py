"""build_adapter, start-up key checks, lazy SDK imports, and the shipped price table."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest

from harness.providers import LIVE_PROVIDERS, MissingKeyError, build_adapter
from harness.providers.anthropic import AnthropicProvider
from harness.providers.gemini import GeminiProvider
from tests.conftest import fixture_prices

KEYS = ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
# The models recommended for the default routes (cheap / mid / frontier).
RECOMMENDED = {
    "gemini-3.8-flash": "gemini",
    "claude-sonnet-5-5": "anthropic",
    "claude-opus-5-5": "anthropic",
}


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("name", "variable", "adapter"),
    [
        ("anthropic", "ANTHROPIC_API_KEY", AnthropicProvider),
        ("gemini", "GEMINI_API_KEY", GeminiProvider),
    ],
)
def test_builds_each_adapter_from_the_environment(monkeypatch, name, variable, adapter):
    """With its key set, each live provider is built as its bare adapter, named for its routes."""
    monkeypatch.setenv(variable, "k-123")

    provider = build_adapter(name, timeout_s=30)

    assert (adapter, name) == (type(provider), provider.name)


@pytest.mark.parametrize(
    ("name", "named"),
    [("anthropic", "ANTHROPIC_API_KEY"), ("gemini", "GEMINI_API_KEY or GOOGLE_API_KEY")],
)
def test_missing_key_is_a_start_up_error_naming_the_variable(name, named):
    """No key: MissingKeyError (a ValueError, i.e. bad input) that says what to set."""
    with pytest.raises(MissingKeyError, match=named) as caught:
        build_adapter(name, timeout_s=30)

    assert isinstance(caught.value, ValueError)


def test_blank_key_counts_as_missing(monkeypatch):
    """A key variable set to whitespace is treated as unset."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")

    with pytest.raises(MissingKeyError):
        build_adapter("anthropic", timeout_s=30)


def test_unknown_provider_is_refused():
    """A provider name other than the live ones is a ValueError listing them."""
    with pytest.raises(ValueError, match="anthropic, gemini, openai or an endpoint"):
        build_adapter("mistral", timeout_s=30)


def test_importing_providers_does_not_load_the_sdks():
    """harness.providers, its base and the call layer import without loading any vendor SDK."""
    code = (
        "import sys, harness.providers, harness.llm, harness.calls.caller;"
        "print([m in sys.modules for m in ('anthropic', 'google.genai', 'openai')])"
    )

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert out.stdout.strip() == "[False, False, False]"


def test_live_provider_names():
    """The built-in live providers are anthropic, gemini and openai (endpoints come on top)."""
    assert LIVE_PROVIDERS == ("anthropic", "gemini", "openai")


def test_recommended_default_models_are_priced_and_current():
    """The recommended cheap/mid/frontier models are in the shipped table, not retiring."""
    table = fixture_prices()

    rows = {model: (table.get(model).provider, table.get(model).retires) for model in RECOMMENDED}

    assert {model: (provider, None) for model, provider in RECOMMENDED.items()} == rows


def test_price_table_is_dated_and_sane():
    """The table is checked recently; every row has non-negative prices, cache reads cheapest."""
    table = fixture_prices()

    bad = [
        p.model
        for p in table.prices.values()
        if min(p.input, p.output, p.cache_write, p.cache_read) < 0 or p.cache_read > p.input
    ]
    assert (bad, table.checked >= dt.date(2026, 11, 1)) == ([], True)


def test_announced_retirements_are_recorded():
    """Sonnet 4.5 and Gemini 2.5 Flash/Pro carry their announced retirement dates."""
    table = fixture_prices()

    assert {
        "claude-sonnet-4-5": dt.date(2026, 11, 30),
        "gemini-2.5-flash": dt.date(2026, 12, 1),
        "gemini-2.5-pro": dt.date(2026, 12, 1),
    } == {
        m: table.get(m).retires for m in ("claude-sonnet-4-5", "gemini-2.5-flash", "gemini-2.5-pro")
    }
