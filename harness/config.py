"""Operator configuration: shipped defaults, merged with the operator's harness.yaml."""

from __future__ import annotations

import datetime as dt
import difflib
import re
import typing
from decimal import Decimal
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.budget import BudgetConfig
from harness.pricing import PriceError, PriceTable, load_prices
from harness.providers.base import ServiceTier
from harness.tasks import YamlDoc, YamlError, read_yaml

__all__ = [
    "MAX_USD",
    "STEPS",
    "BatchConfig",
    "ConfigError",
    "DeliverConfig",
    "FixFailures",
    "GitDeliverConfig",
    "HarnessConfig",
    "RouteConfig",
    "load_config",
]

STEPS = ("write", "review", "rewrite", "fix")


class ConfigError(ValueError):
    """The operator's configuration is invalid; the message says where and what to change."""


MAX_CONFIG_BYTES = 2**20
MAX_USD = Decimal(1_000_000)  # a cap above this is a typo, not a budget
# Strict numbers: `true` is not 1, `5.0` is not 5, and .inf / .nan are refused (allow_inf_nan).
Count = Annotated[int, Field(strict=True, ge=1, le=1024)]
Small = Annotated[int, Field(strict=True, ge=1, le=50)]
Seconds = Annotated[float, Field(strict=True, gt=0, le=86_400)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RouteConfig(_Strict):
    provider: str
    model: str
    max_tokens: int = Field(strict=True, gt=0, le=1_000_000)
    service_tier: ServiceTier = ServiceTier.STANDARD  # flex: Gemini Flex, half price, sheddable

    @model_validator(mode="after")
    def _tier_offered(self) -> RouteConfig:
        if self.service_tier is ServiceTier.BATCH:
            raise ValueError(
                "service_tier: batch is not a route option; the night's batch is set under "
                "batch: (use standard or flex here)"
            )
        if self.service_tier is ServiceTier.FLEX and self.provider != "gemini":
            raise ValueError(
                f"service_tier: flex is offered only by gemini (Gemini Flex), not by "
                f"{self.provider}; remove service_tier: flex or route the tier to a gemini model"
            )
        return self


class FixFailures(StrEnum):
    """What a fix prompt shows of the best candidate's test run."""

    FOCUSED = "focused"  # the failing tests only, each with its message and traceback
    FULL = "full"  # every visible test's outcome, passing ones too, as the published loop did


class LoopConfig(_Strict):
    stop_after_no_improvement: Small = 2
    escalate: bool = Field(default=True, strict=True)
    escalate_after: Small = 1
    escalate_to: str = "frontier"
    review: bool = Field(default=True, strict=True)  # review (and rewrite) attempt 1's draft
    fix_failures: FixFailures = FixFailures.FOCUSED


class ConcurrencyConfig(_Strict):
    tasks: Annotated[int, Field(strict=True, ge=1, le=256)] = 4
    providers: dict[str, Count] = {}
    tests: Count | None = None  # test runs at once; null = CPU count


class TestsConfig(_Strict):
    __test__ = False

    timeout_s: Seconds = 120
    per_test_timeout_s: Seconds = 30
    sandbox: Literal["auto", "bwrap", "none"] = "auto"


class MetricsConfig(_Strict):
    path: Path | None = None  # a .prom file in node_exporter's textfile directory
    labels: dict[str, str] = {}

    @field_validator("path")
    @classmethod
    def _a_file(cls, value: Path | None) -> Path | None:
        if value is not None and value.is_dir():
            raise ValueError(f"{value} is a directory; name the .prom file in it")
        return value


class GitDeliverConfig(_Strict):
    """Commit each shipped output (or the night's) to `branch` through a worktree of its own."""

    branch: str = "harness/{run_id}"  # {run_id} is the only placeholder
    per: Literal["task", "night"] = "task"

    @field_validator("branch")
    @classmethod
    def _template(cls, value: str) -> str:
        try:
            value.format(run_id="r")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"{value!r}: the only placeholder is {{run_id}} (got {exc!s}); "
                'e.g. "harness/{run_id}"'
            ) from None
        return value


class DeliverConfig(_Strict):
    git: GitDeliverConfig | None = None  # off unless configured


_DURATION = re.compile(r"^(\d+)(s|m|h)$")
_CLOCK = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600}


class BatchConfig(_Strict):
    """Attempt 1's writes through the vendors' batch APIs (half price, hours of latency)."""

    enabled: bool = Field(default=False, strict=True)
    steps: tuple[Literal["write"], ...] = ("write",)
    deadline: str = "2h"  # "05:30": next local occurrence; "90s", "45m", "2h": from the start
    poll_s: Seconds = 30
    max_poll_s: Seconds = 600

    @field_validator("deadline")
    @classmethod
    def _deadline(cls, value: str) -> str:
        if not (_DURATION.match(value) or _CLOCK.match(value)):
            raise ValueError(
                f'deadline {value!r} is neither a clock time like "05:30" nor a duration '
                'like "90s", "45m" or "2h"; write one of those'
            )
        return value

    def deadline_at(self, start: dt.datetime) -> dt.datetime:
        """When the batch must have ended: a duration from `start` (aware), or the next
        occurrence of the clock time in local time at or after `start`."""
        if m := _DURATION.match(self.deadline):
            return start + dt.timedelta(seconds=int(m[1]) * _UNIT_S[m[2]])
        m = _CLOCK.match(self.deadline)
        assert m is not None  # validated
        local = start.astimezone()
        at = local.replace(hour=int(m[1]), minute=int(m[2]), second=0, microsecond=0)
        return at if at > local else at + dt.timedelta(days=1)


class HarnessConfig(_Strict):
    """The whole configuration; build it with `load_config`, which also checks the tiers."""

    routes: dict[str, RouteConfig]
    steps: dict[str, str]
    step_max_tokens: dict[str, int] = {}  # step → output cap; the route's max_tokens still caps
    loop: LoopConfig = LoopConfig()
    # Mark each task's stable prefix for the provider's prompt cache (Anthropic: a cache
    # breakpoint; Gemini caches implicitly whatever this says).
    prompt_cache: bool = Field(default=True, strict=True)
    concurrency: ConcurrencyConfig = ConcurrencyConfig()
    tests: TestsConfig = TestsConfig()
    provider_timeout_s: Seconds = 600
    prices: Path | None = None
    # Built per load, not at import: the default ledger path follows $XDG_STATE_HOME.
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    metrics: MetricsConfig = MetricsConfig()
    deliver: DeliverConfig = DeliverConfig()
    batch: BatchConfig = BatchConfig()


Loc = tuple[str | int, ...]


def _tier_problems(config: HarnessConfig) -> list[tuple[Loc, str]]:
    """Every step names a tier, and every tier a step or escalation uses has a route."""
    defined = ", ".join(sorted(config.routes))
    problems: list[tuple[Loc, str]] = []
    missing = [s for s in STEPS if s not in config.steps]
    if missing:
        problems.append((("steps",), f"add a tier for {', '.join(missing)}"))
    for step in config.steps:
        if step not in STEPS:
            close = difflib.get_close_matches(step, STEPS, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"the steps are {', '.join(STEPS)}"
            problems.append((("steps", step), f"unknown step, so it would be ignored; {hint}"))
    uses: list[tuple[Loc, str]] = [(("steps", s), t) for s, t in config.steps.items()]
    uses.append((("loop", "escalate_to"), config.loop.escalate_to))
    for loc, tier in uses:
        if tier not in config.routes:
            msg = f"tier {tier!r} has no route; add it under routes: (defined: {defined})"
            problems.append((loc, msg))
    for step, tokens in config.step_max_tokens.items():
        if step not in STEPS or not 1 <= tokens <= 1_000_000:
            msg = f"name a step ({', '.join(STEPS)}) and a number of tokens from 1 to 1,000,000"
            problems.append((("step_max_tokens", step), msg))
    return problems


def _amount_problems(raw: dict[str, Any]) -> list[tuple[Loc, str]]:
    """Budget amounts are finite and at most MAX_USD: '1e400' is a valid Decimal, not a cap."""
    budget = raw.get("budget")
    problems: list[tuple[Loc, str]] = []
    for key, value in budget.items() if isinstance(budget, dict) else ():
        if not str(key).endswith("_usd") or isinstance(value, bool) or value is None:
            continue
        try:
            amount = Decimal(str(value))
        except ArithmeticError:
            continue  # not a number: the schema says so
        if amount.is_finite() and amount > MAX_USD:
            msg = f"{value} is more than {MAX_USD:,} USD; write the cap you mean"
            problems.append((("budget", key), msg))
    return problems


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_yaml(path: Path, what: str = "config") -> YamlDoc:
    """The file parsed once (its duplicate keys are reported with the other problems)."""
    try:
        return read_yaml(path, what=what, max_bytes=MAX_CONFIG_BYTES)
    except YamlError as exc:
        raise ConfigError(str(exc)) from None


def _shipped() -> dict[str, Any]:
    text = resources.files("harness.data").joinpath("defaults.yaml").read_text()
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_config(path: Path | None = None) -> HarnessConfig:
    """The shipped defaults, overridden by the operator's file at `path` when given.

    Every problem is reported at once, each with the file, line, key and what to change.
    """
    raw, doc = _shipped(), None
    if path is not None:
        doc = _read_yaml(Path(path))
        if doc.data is not None and not isinstance(doc.data, dict):
            raise ConfigError(f"{path}:1: expected a mapping of settings at the top level")
        override = doc.data or {}
        raw = _merge(raw, override)
        if isinstance(override.get("prices"), str) and override["prices"]:
            raw["prices"] = str((Path(path).parent / override["prices"]).resolve())
    problems = _amount_problems(raw)
    try:
        config = HarnessConfig.model_validate(raw)
    except ValidationError as exc:
        problems += [(tuple(e["loc"]), explain(e)) for e in exc.errors()]
    else:
        problems += _tier_problems(config)
    rows = [(doc.line(*loc) if doc else 0, _dotted(loc), msg) for loc, msg in problems]
    rows += [(d.line, d.key, d.message) for d in (doc.duplicates if doc else ())]
    if rows:
        where = path or "the shipped defaults (harness/data/defaults.yaml)"
        lines = [f"{where}:{line}: {key or 'config'}: {msg}" for line, key, msg in sorted(rows)]
        raise ConfigError(
            f"{len(lines)} problem(s) in the config; nothing ran:\n  " + "\n  ".join(lines)
        )
    return config


def _dotted(loc: Loc) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def explain(err: Any) -> str:
    """A pydantic error as what to change."""
    kind, got, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    shown = repr(got) if len(repr(got)) <= 60 else repr(got)[:57] + "..."
    if kind == "extra_forbidden":
        return f"unknown key; {_suggest(err['loc'])}"
    if kind == "missing":
        return "missing; add it"
    if kind == "finite_number":
        return f"must be a finite number (got {shown})"
    if kind in ("int_type", "int_from_float", "int_parsing"):
        return f"expected a whole number, e.g. 4 (got {shown})"
    if kind in ("float_type", "float_parsing", "decimal_type", "decimal_parsing"):
        return f"expected a number (got {shown})"
    if kind == "value_error":  # our own validators' messages already say what to change
        return str(err["msg"]).removeprefix("Value error, ")
    if kind == "path_type":
        return f"expected a path (got {shown})"
    if kind == "bool_type":
        return f"expected true or false (got {shown})"
    bounds = {
        "less_than_equal": "at most {le}",
        "greater_than": "more than {gt}",
        "greater_than_equal": "at least {ge}",
    }
    if kind in bounds:
        plain = {
            k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in ctx.items()
        }
        return f"must be {bounds[kind].format(**plain)} (got {shown})"
    return f"{err['msg']} (got {shown})"


def _suggest(loc: Loc) -> str:
    """The key probably meant at `loc`, or the keys allowed there."""
    node: Any = HarnessConfig
    for part in loc[:-1]:  # through models, and into the values of dicts (routes.<tier>)
        if _is_model(node):
            field = node.model_fields.get(str(part))
            node = field.annotation if field else None
        else:
            args = [a for a in typing.get_args(node) if a is not type(None)]
            node = args[-1] if args else None
    valid = tuple(node.model_fields) if _is_model(node) else ()
    close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"valid keys here: {', '.join(valid)}"


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def check_prices(config: HarnessConfig, today: dt.date | None = None) -> PriceTable:
    """Load the price table and prove every route's model is priced and not retired.

    A model that no longer has a price, or whose announced retirement date has passed,
    is a start-up error: the night would otherwise fail on every call.
    """
    today = today or dt.date.today()
    doc = None
    if config.prices is not None:  # size, encoding, depth and duplicate keys; lines
        doc = _read_yaml(config.prices, "price table")
    try:
        table = _load_prices(config.prices, doc)
        for tier, route in config.routes.items():
            try:
                price = table.get(route.model)
                price.at(route.service_tier)  # a flex route needs a flex price
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


def _load_prices(path: Path | None, doc: YamlDoc | None) -> PriceTable:
    """The price table; an invalid one lists every problem at its line, as the config does."""
    try:
        return load_prices(path)
    except PriceError as exc:
        if doc is None or not exc.errors:
            raise
        rows = sorted(
            (doc.line(*e["loc"]), _dotted(tuple(e["loc"])), explain(e)) for e in exc.errors
        )
        lines = [f"{path}:{line}: {key}: {msg}" for line, key, msg in rows]
        raise PriceError(
            f"{len(lines)} problem(s) in the price table; nothing ran:\n  " + "\n  ".join(lines)
        ) from None
