"""Price table and exact cost."""

from __future__ import annotations

from decimal import Decimal

import pytest

from harness.pricing import Price, PriceError, cost, load_prices
from harness.providers.base import Usage

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
