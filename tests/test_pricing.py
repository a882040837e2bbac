"""Price table and exact cost."""

from __future__ import annotations

from decimal import Decimal

import pytest
import yaml

from harness.llm import ServiceTier, Usage
from harness.pricing import Price, PriceError, cost, load_prices
from tests.conftest import fixture_prices

PRICE = Price("m", "p", Decimal("3"), Decimal("15"), Decimal("3.75"), Decimal("0.30"))


def test_cost_is_exact_decimal_over_every_token_kind() -> None:
    """Fresh input, cache write, cache read and output each at their own price."""
    usage = Usage(
        input_tokens=1000, cache_write_tokens=2000, cache_read_tokens=10000, output_tokens=500
    )

    assert cost(usage, PRICE) == Decimal("0.003") + Decimal("0.0075") + Decimal("0.003") + Decimal(
        "0.0075"
    )


def test_one_token_is_not_rounded_away() -> None:
    """A single output token costs its exact fraction of a cent."""
    assert cost(Usage(output_tokens=1), PRICE) == Decimal("0.000015")


def test_unknown_model_is_an_error_naming_the_table() -> None:
    """Looking up an unpriced model raises with what to change."""
    with pytest.raises(PriceError, match="has no price in the shipped price table"):
        load_prices().get("no-such-model")


def test_operator_table_is_validated(tmp_path) -> None:
    """A malformed operator price table is refused with its path."""
    path = tmp_path / "prices.yaml"
    path.write_text("checked: 2026-01-01\nmodels:\n  x: {provider: a, input: cheap}\n")

    with pytest.raises(PriceError, match=str(path)):
        load_prices(path)


@pytest.mark.parametrize("rate", ["input", "output", "cache_write", "cache_read"])
@pytest.mark.parametrize("value", ["'-0.01'", "-1", "'-Infinity'", "'NaN'"])
def test_a_negative_or_unbounded_rate_is_refused(tmp_path, rate: str, value: str) -> None:
    """A negative price would settle calls as refunds, lifting every cap: refused."""
    rates = {"input": "'3'", "output": "'15'", "cache_write": "'3.75'", "cache_read": "'0.3'"}
    row = ", ".join(f"{k}: {value if k == rate else v}" for k, v in rates.items())
    path = tmp_path / "prices.yaml"
    path.write_text(f"checked: 2026-01-01\nmodels:\n  m: {{provider: a, {row}}}\n")

    with pytest.raises(PriceError) as caught:
        load_prices(path)

    assert [("models", "m", rate)] == [e["loc"] for e in caught.value.errors]


def test_anthropic_batch_halves_every_rate_caching_included() -> None:
    """Anthropic's batch discount stacks with prompt caching: every token kind at half."""
    price = fixture_prices().get("claude-sonnet-5-5")

    batch = price.at(ServiceTier.BATCH)

    half = Decimal("0.5")
    assert (
        price.input * half,
        price.output * half,
        price.cache_write * half,
        price.cache_read * half,
        ServiceTier.BATCH,
    ) == (batch.input, batch.output, batch.cache_write, batch.cache_read, batch.service_tier)


@pytest.mark.parametrize("tier", [ServiceTier.BATCH, ServiceTier.FLEX])
def test_gemini_batch_and_flex_halve_input_and_output_not_cache_hits(tier) -> None:
    """Gemini's batch and flex tiers halve input and output; cache hits keep the list rate
    (the vendor does not say they stack, so the table over-counts rather than under-counts)."""
    price = fixture_prices().get("gemini-3.8-flash")

    at = price.at(tier)

    half = Decimal("0.5")
    assert (price.input * half, price.output * half, price.cache_read, price.cache_write) == (
        at.input,
        at.output,
        at.cache_read,
        at.cache_write,
    )


def test_a_tier_the_vendor_does_not_offer_is_an_error() -> None:
    """Anthropic has no flex tier: asking for it names what to change, never guesses."""
    with pytest.raises(PriceError, match="no 'flex' price: add it under service_tiers: anthropic"):
        fixture_prices().get("claude-sonnet-5-5").at(ServiceTier.FLEX)


def test_every_shipped_tier_names_its_source() -> None:
    """Each discount in the shipped table says where it was read, and when."""
    table = load_prices()

    sources = {(p.provider, t): d.source for p in table.prices.values() for t, d in p.tiers}

    assert {("anthropic", ServiceTier.BATCH), ("gemini", ServiceTier.BATCH)} <= set(sources)
    assert ("gemini", ServiceTier.FLEX) in sources
    assert all(s.startswith("https://") and "checked 20" in s for s in sources.values())


def test_a_table_is_parsed_once_per_content_and_read_only(tmp_path) -> None:
    """Loading an unchanged file again returns the same table, which cannot be changed; a
    changed file is parsed again."""
    path = tmp_path / "prices.yaml"
    row = "{provider: a, input: '3', output: '15', cache_write: '3.75', cache_read: '0.3'}"
    path.write_text(f"checked: 2026-01-01\nmodels:\n  m: {row}\n")
    first, again = load_prices(path), load_prices(path)
    path.write_text(f"checked: 2026-02-01\nmodels:\n  m: {row}\n")
    changed = load_prices(path)

    with pytest.raises(TypeError):
        first.prices["m"] = PRICE  # type: ignore[index]
    assert (first is again, str(changed.checked)) == (True, "2026-02-01")


def test_bad_yaml_is_reported_at_its_line_as_the_pure_loader_reports_it(tmp_path) -> None:
    """A table libyaml refuses is refused with the pure loader's message and line."""
    path = tmp_path / "prices.yaml"
    text = "checked: 2026-01-01\nmodels:\n  m: {provider: a\n  n: [\n"
    path.write_text(text)
    with pytest.raises(yaml.YAMLError) as pure:
        yaml.safe_load(text)

    with pytest.raises(PriceError) as caught:
        load_prices(path)

    assert f"{path} is not a valid price table: {pure.value}" == str(caught.value)


def test_every_shipped_price_says_where_it_comes_from() -> None:
    """Each model row of the shipped price table names its source (a page, a date)."""
    table = load_prices()

    assert [m for m, p in table.prices.items() if not p.source.strip()] == []
