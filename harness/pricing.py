"""Dated price table and the one cost function: exact, in Decimal USD."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.llm import ServiceTier, Usage

__all__ = ["MILLION", "Price", "PriceError", "PriceTable", "TierDiscount", "cost", "load_prices"]

MILLION = Decimal(1_000_000)
# libyaml when installed: a night reads the table more than once, and the pure-Python loader
# is the slow part of start-up. A table it refuses is parsed again by the pure loader, so the
# message (and its line) is the same with or without libyaml.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class PriceError(ValueError):
    """The price table is unreadable, or a model has no price. `errors`: the pydantic errors
    of an invalid table (each with its `loc`), for the caller to place at their lines."""

    def __init__(self, message: str, errors: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.errors = tuple(errors)


# A negative price would settle every call as a refund and let the caps be crossed.
Rate = Annotated[Decimal, Field(ge=0, allow_inf_nan=False)]


class _PriceRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    provider: str
    input: Rate
    output: Rate
    cache_write: Rate
    cache_read: Rate
    retires: dt.date | None = None
    source: str = ""  # where the price comes from (every shipped row says; tests/test_pricing.py)


class _TierRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    multiplier: Rate
    cache_discounted: bool  # does the multiplier also apply to cache reads and writes?
    source: str


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    checked: dt.date
    models: dict[str, _PriceRow]
    # provider -> service tier ("batch", "flex") -> discount; standard is the list price
    service_tiers: dict[str, dict[ServiceTier, _TierRow]] = {}


@dataclass(frozen=True)
class TierDiscount:
    """A vendor's discount for a service tier, applied to every token price of its models."""

    multiplier: Decimal
    cache_discounted: bool
    source: str = ""


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
    source: str = ""
    service_tier: ServiceTier = ServiceTier.STANDARD
    tiers: tuple[tuple[ServiceTier, TierDiscount], ...] = ()

    def at(self, tier: ServiceTier) -> Price:
        """This model's price when served at `tier`; a tier its vendor does not offer (or
        the table does not price) is an error, never a guessed discount."""
        if tier == ServiceTier.STANDARD:
            return self
        found = dict(self.tiers).get(tier)
        if found is None:
            raise PriceError(
                f"model {self.model!r} has no {tier.value!r} price: add it under "
                f"service_tiers: {self.provider}: in the price table, or do not route it there"
            )
        m = found.multiplier
        cache = m if found.cache_discounted else Decimal(1)
        return dataclasses.replace(
            self,
            input=self.input * m,
            output=self.output * m,
            cache_write=self.cache_write * cache,
            cache_read=self.cache_read * cache,
            service_tier=tier,
            tiers=(),
        )


@dataclass(frozen=True)
class PriceTable:
    """The dated table, plus the prices an OpenAI-compatible endpoint gives its own models
    (config `endpoints:`). A model is priced per provider: an endpoint's own price first,
    then the table's row, so two endpoints may serve one model id at different prices."""

    checked: dt.date
    prices: Mapping[str, Price]  # read only: one table is shared by every caller (load_prices)
    source: str = ""
    # provider → its own rows, read only (with_endpoints)
    endpoints: Mapping[str, Mapping[str, Price]] = dataclasses.field(
        default_factory=lambda: MappingProxyType({})
    )

    def get(self, model: str, provider: str = "") -> Price:
        """The model's price on `provider`; a model with no price is an error, never $0."""
        rows = self.rows(provider)
        try:
            return rows[model]
        except KeyError:
            known = ", ".join(sorted(rows))
            where = f"endpoints.{provider}.models nor in " if provider in self.endpoints else ""
            raise PriceError(
                f"model {model!r} has no price in {where}{self.source or 'the price table'}; "
                f"add it there or route to a priced model ({known})"
            ) from None

    def rows(self, provider: str = "") -> Mapping[str, Price]:
        """Every model priced for `provider`: its endpoint's own rows over the table's."""
        own = self.endpoints.get(provider)
        return self.prices if not own else MappingProxyType({**self.prices, **own})

    def with_endpoints(self, endpoints: Mapping[str, Mapping[str, Price]]) -> PriceTable:
        """This table with the endpoints' own prices added (each endpoint's rows read only)."""
        frozen = {name: MappingProxyType(dict(rows)) for name, rows in endpoints.items()}
        return dataclasses.replace(self, endpoints=MappingProxyType(frozen))


def cost(usage: Usage, price: Price) -> Decimal:
    """Exact USD cost of one call's usage (at a tier: pass `price.at(tier)`)."""
    total = (
        usage.input_tokens * price.input
        + usage.cache_write_tokens * price.cache_write
        + usage.cache_read_tokens * price.cache_read
        + usage.output_tokens * price.output
    )
    return total / MILLION


def load_prices(path: Path | None = None) -> PriceTable:
    """Load the shipped price table, or the operator's at `path`. Parsed once per process for
    each path and content: a changed file is parsed again; the table returned is read only."""
    if path is None:
        text = resources.files("harness.data").joinpath("prices.yaml").read_text()
        source = "the shipped price table (harness/data/prices.yaml)"
    else:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise PriceError(f"cannot read price table {path}: {exc.strerror}") from exc
        source = str(path)
    return _parsed(source, text)


@functools.lru_cache(maxsize=16)
def _parsed(source: str, text: str) -> PriceTable:
    """The table in `text`, cached by source and whole content (an error is never cached)."""
    try:
        parsed = _PriceFile.model_validate(_yaml(text))
    except yaml.YAMLError as exc:
        raise PriceError(f"{source} is not a valid price table: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the table"
        message = f"{source} is not a valid price table: {where}: {first['msg']}"
        raise PriceError(message, exc.errors()) from exc
    tiers = {
        provider: tuple(
            (tier, TierDiscount(row.multiplier, row.cache_discounted, row.source))
            for tier, row in rows.items()
        )
        for provider, rows in parsed.service_tiers.items()
    }
    prices = {
        model: Price(model=model, **row.model_dump(), tiers=tiers.get(row.provider, ()))
        for model, row in parsed.models.items()
    }
    return PriceTable(checked=parsed.checked, prices=MappingProxyType(prices), source=source)


def _yaml(text: str) -> Any:
    """`text` parsed with libyaml; what it refuses, parsed again by the pure loader to raise
    that loader's error (its message and line)."""
    try:
        return yaml.load(text, Loader=_FAST_LOADER)
    except yaml.YAMLError:
        return yaml.safe_load(text)
