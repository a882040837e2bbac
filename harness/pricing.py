"""Dated price table and the one cost function: exact, in Decimal USD."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from harness.providers.base import Usage

__all__ = ["MILLION", "Price", "PriceError", "PriceTable", "cost", "load_prices"]

MILLION = Decimal(1_000_000)


class PriceError(ValueError):
    """The price table is unreadable, or a model has no price."""


class _PriceRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    provider: str
    input: Decimal
    output: Decimal
    cache_write: Decimal
    cache_read: Decimal
    retires: dt.date | None = None


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    checked: dt.date
    models: dict[str, _PriceRow]


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model."""

    model: str
    provider: str
    input: Decimal
    output: Decimal
    cache_write: Decimal
    cache_read: Decimal
    retires: dt.date | None = None


@dataclass(frozen=True)
class PriceTable:
    checked: dt.date
    prices: dict[str, Price]
    source: str = ""

    def get(self, model: str) -> Price:
        """The model's price; a model with no price is an error, never a silent $0."""
        try:
            return self.prices[model]
        except KeyError:
            known = ", ".join(sorted(self.prices))
            raise PriceError(
                f"model {model!r} has no price in {self.source or 'the price table'}; "
                f"add it there or route to a priced model ({known})"
            ) from None


def cost(usage: Usage, price: Price) -> Decimal:
    """Exact USD cost of one call's usage."""
    total = (
        usage.input_tokens * price.input
        + usage.cache_write_tokens * price.cache_write
        + usage.cache_read_tokens * price.cache_read
        + usage.output_tokens * price.output
    )
    return total / MILLION


def load_prices(path: Path | None = None) -> PriceTable:
    """Load the shipped price table, or the operator's at `path`."""
    if path is None:
        text = resources.files("harness.data").joinpath("prices.yaml").read_text()
        source = "the shipped price table (harness/data/prices.yaml)"
    else:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise PriceError(f"cannot read price table {path}: {exc.strerror}") from exc
        source = str(path)
    try:
        parsed = _PriceFile.model_validate(yaml.safe_load(text))
    except (yaml.YAMLError, ValidationError) as exc:
        raise PriceError(f"{source} is not a valid price table: {exc}") from exc
    prices = {model: Price(model=model, **row.model_dump()) for model, row in parsed.models.items()}
    return PriceTable(checked=parsed.checked, prices=prices, source=source)
