"""Operator configuration: shipped defaults, merged with the operator's harness.yaml."""

from __future__ import annotations

import datetime as dt
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.budget import BudgetConfig
from harness.pricing import PriceError, PriceTable, load_prices

__all__ = ["STEPS", "ConfigError", "HarnessConfig", "RouteConfig", "load_config"]

STEPS = ("write", "review", "rewrite", "fix")


class ConfigError(ValueError):
    """The operator's configuration is invalid; the message says what to change."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RouteConfig(_Strict):
    provider: str
    model: str
    max_tokens: int = Field(gt=0)


class LoopConfig(_Strict):
    stop_after_no_improvement: int = Field(default=2, ge=1)
    escalate: bool = True
    escalate_after: int = Field(default=1, ge=1)
    escalate_to: str = "frontier"


class ConcurrencyConfig(_Strict):
    tasks: int = Field(default=4, ge=1)
    providers: dict[str, int] = {}
    tests: int | None = Field(default=None, ge=1)  # test runs at once; null = CPU count


class TestsConfig(_Strict):
    __test__ = False

    timeout_s: float = Field(default=120, gt=0)
    per_test_timeout_s: float = Field(default=30, gt=0)
    sandbox: Literal["auto", "bwrap", "none"] = "auto"


class MetricsConfig(_Strict):
    path: Path | None = None  # a .prom file in node_exporter's textfile directory
    labels: dict[str, str] = {}


class HarnessConfig(_Strict):
    routes: dict[str, RouteConfig]
    steps: dict[str, str]
    step_max_tokens: dict[str, int] = {}  # step → output cap; the route's max_tokens still caps
    loop: LoopConfig = LoopConfig()
    concurrency: ConcurrencyConfig = ConcurrencyConfig()
    tests: TestsConfig = TestsConfig()
    provider_timeout_s: float = Field(default=600, gt=0)
    prices: Path | None = None
    budget: BudgetConfig = BudgetConfig()
    metrics: MetricsConfig = MetricsConfig()

    @model_validator(mode="after")
    def _tiers_exist(self) -> HarnessConfig:
        missing_steps = [s for s in STEPS if s not in self.steps]
        if missing_steps:
            raise ValueError(f"steps: add a tier for {', '.join(missing_steps)}")
        tiers = {*self.steps.values(), self.loop.escalate_to}
        odd = sorted(s for s, n in self.step_max_tokens.items() if s not in STEPS or n < 1)
        if odd:
            raise ValueError(
                f"step_max_tokens: {', '.join(odd)}: name a step ({', '.join(STEPS)}) "
                "and a positive number of tokens"
            )
        unknown = sorted(t for t in tiers if t not in self.routes)
        if unknown:
            raise ValueError(
                f"tier(s) {', '.join(unknown)} have no route; add them under routes: "
                f"(defined: {', '.join(sorted(self.routes))})"
            )
        return self


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    return data


def _shipped() -> dict[str, Any]:
    return yaml.safe_load(resources.files("harness.data").joinpath("defaults.yaml").read_text())


def load_config(path: Path | None = None) -> HarnessConfig:
    """The shipped defaults, overridden by the operator's file at `path` when given."""
    raw = _shipped()
    if path is not None:
        override = _read_yaml(Path(path))
        raw = _merge(raw, override)
        for key in ("prices",):
            if override.get(key):
                raw[key] = str((Path(path).parent / override[key]).resolve())
    try:
        return HarnessConfig.model_validate(raw)
    except ValidationError as exc:
        where = path or "the shipped defaults"
        lines = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
        raise ConfigError(f"{where}: invalid config:\n  " + "\n  ".join(lines)) from exc


def check_prices(config: HarnessConfig, today: dt.date | None = None) -> PriceTable:
    """Load the price table and prove every route's model is priced and not retired.

    A model that no longer has a price, or whose announced retirement date has passed,
    is a start-up error: the night would otherwise fail on every call.
    """
    today = today or dt.date.today()
    try:
        table = load_prices(config.prices)
        for tier, route in config.routes.items():
            try:
                price = table.get(route.model)
            except PriceError as exc:
                raise PriceError(f"route {tier!r}: {exc}") from None
            if price.retires is not None and price.retires <= today:
                raise PriceError(
                    f"route {tier!r}: model {route.model!r} retired on {price.retires}; "
                    "route the tier to a current model in harness.yaml"
                )
    except PriceError as exc:
        raise ConfigError(str(exc)) from exc
    return table
