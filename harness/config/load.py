"""Loading the config: shipped defaults merged with harness.yaml, every problem at its line;
and the price table its routes need."""

from __future__ import annotations

import datetime as dt
import difflib
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness.config.endpoints import BUILTIN_PROVIDERS, endpoint_prices, name_problem
from harness.config.explain import Loc, dotted, explain
from harness.config.models import MAX_CONFIG_BYTES, MAX_USD, STEPS, ConfigError, HarnessConfig
from harness.pricing import PriceError, PriceTable, load_prices
from harness.tasks import YamlDoc, YamlError, read_yaml

__all__ = ["CHEAPEST", "cheapest_routes", "check_prices", "load_config"]


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
    uses.append((("loop", "judge", "tier"), config.loop.judge.tier))
    for loc, tier in uses:
        if tier not in config.routes:
            msg = f"tier {tier!r} has no route; add it under routes: (defined: {defined})"
            problems.append((loc, msg))
    problems += _provider_problems(config)
    for step, tokens in config.step_max_tokens.items():
        if step not in STEPS or not 1 <= tokens <= 1_000_000:
            msg = f"name a step ({', '.join(STEPS)}) and a number of tokens from 1 to 1,000,000"
            problems.append((("step_max_tokens", step), msg))
    return problems


def _provider_problems(config: HarnessConfig) -> list[tuple[Loc, str]]:
    """Every route names a built-in provider or an endpoint; endpoint names are free."""
    problems = [(("endpoints", n), p) for n in config.endpoints if (p := name_problem(n))]
    known = sorted({"anthropic", "gemini", "openai", *config.endpoints})
    for tier, route in config.routes.items():
        if route.provider not in BUILTIN_PROVIDERS and route.provider not in config.endpoints:
            msg = (
                f"unknown provider {route.provider!r}; name one of {', '.join(known)}, or add "
                f"it under endpoints: (an OpenAI-compatible server)"
            )
            problems.append((("routes", tier, "provider"), msg))
    return problems


def _no_op_problems(config: HarnessConfig, override: dict[str, Any]) -> list[tuple[Loc, str]]:
    """Settings the operator wrote that could never take effect: a step's or the judge's
    output cap above its route's (the route's caps it), a per-test timeout above the whole
    run's."""
    problems: list[tuple[Loc, str]] = []
    written = override.get("step_max_tokens")
    for step in written if isinstance(written, dict) else ():
        tier = config.steps.get(step)
        route = config.routes.get(tier) if tier else None
        tokens = config.step_max_tokens.get(step)
        if route is not None and tokens is not None and tokens > route.max_tokens:
            msg = (
                f"{tokens} is above routes.{tier}.max_tokens ({route.max_tokens}), which caps "
                f"the step anyway; lower it to at most {route.max_tokens}, or raise the route's"
            )
            problems.append((("step_max_tokens", step), msg))
    problems += _judge_cap_problems(config, override)
    tests = override.get("tests")
    timeout, per_test = config.tests.timeout_s, config.tests.per_test_timeout_s
    if isinstance(tests, dict) and per_test > timeout:
        key = "per_test_timeout_s" if "per_test_timeout_s" in tests else "timeout_s"
        msg = (
            f"tests.per_test_timeout_s ({per_test:g} s) is above tests.timeout_s ({timeout:g} s) "
            "for the whole run, so it never applies; make it at most the run's timeout"
        )
        problems.append((("tests", key), msg))
    return problems


def _judge_cap_problems(config: HarnessConfig, override: dict[str, Any]) -> list[tuple[Loc, str]]:
    """A `loop.judge.max_tokens` the operator wrote above its route's cap, which caps it."""
    loop = override.get("loop")
    judge = loop.get("judge") if isinstance(loop, dict) else None
    tier, tokens = config.loop.judge.tier, config.loop.judge.max_tokens
    route = config.routes.get(tier)
    if not isinstance(judge, dict) or "max_tokens" not in judge or route is None:
        return []
    if tokens <= route.max_tokens:
        return []
    msg = (
        f"{tokens} is above routes.{tier}.max_tokens ({route.max_tokens}), which caps the "
        f"judge anyway; lower it to at most {route.max_tokens}, or raise the route's"
    )
    return [(("loop", "judge", "max_tokens"), msg)]


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


def _resolve_tls_files(raw: dict[str, Any], folder: Path) -> None:
    """scale.temporal.tls's files, relative to the config's folder as `prices` is."""
    tls = raw.get("scale", {}).get("temporal", {}).get("tls")
    if not isinstance(tls, dict):
        return
    for key in ("server_ca", "client_cert", "client_key"):
        if isinstance(tls.get(key), str) and tls[key]:
            tls[key] = str((folder / tls[key]).resolve())


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _distributed_batch_steps(raw: dict[str, Any], override: Any) -> None:
    """The shipped batch defaults go in rounds, which run on the local engine only: on
    another engine they do not apply. Batch mode is off there unless the operator's file
    turns it on, and then batches attempt 1's writes unless it names `batch.steps` (steps
    in rounds it names are refused there, with what to write instead)."""
    scale, batch = raw.get("scale"), raw.get("batch")
    if not isinstance(scale, dict) or scale.get("engine", "local") == "local":
        return
    if not isinstance(batch, dict):
        return
    written = override.get("batch") if isinstance(override, dict) else None
    written = written if isinstance(written, dict) else {}
    if "enabled" not in written:
        batch["enabled"] = False
    if "steps" not in written:
        batch["steps"] = ["write"]


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
        _resolve_tls_files(raw, Path(path).parent)
        _distributed_batch_steps(raw, override)
    problems = _amount_problems(raw)
    override = (doc.data or {}) if doc else {}
    try:
        config = HarnessConfig.model_validate(raw)
    except ValidationError as exc:
        problems += [(tuple(e["loc"]), explain(e)) for e in exc.errors()]
    else:
        problems += _tier_problems(config)
        problems += _no_op_problems(config, override if isinstance(override, dict) else {})
        if not problems:
            config, unpriced = cheapest_routes(config)
            problems += unpriced
    rows = [(doc.line(*loc) if doc else 0, dotted(loc), msg) for loc, msg in problems]
    rows += [(d.line, d.key, d.message) for d in (doc.duplicates if doc else ())]
    if rows:
        where = path or "the shipped defaults (harness/data/defaults.yaml)"
        lines = [f"{where}:{line}: {key or 'config'}: {msg}" for line, key, msg in sorted(rows)]
        raise ConfigError(
            f"{len(lines)} problem(s) in the config; nothing ran:\n  " + "\n  ".join(lines)
        )
    return config


CHEAPEST = "cheapest"  # a route's `model`: its provider's cheapest current model


def cheapest_routes(
    config: HarnessConfig, today: dt.date | None = None
) -> tuple[HarnessConfig, list[tuple[Loc, str]]]:
    """Every route whose model is `cheapest` on the model the price table (or the route's
    endpoint) prices lowest for its provider, input and output per million tokens added (a
    review reads a prompt and answers briefly: both count), retired models left out; ties
    go to the first model id in order. The table is data: which model that is changes when
    it does, never in code. Problems: a provider the table prices no current model for."""
    wanted = [tier for tier, r in config.routes.items() if r.model == CHEAPEST]
    if not wanted:
        return config, []
    today = today or dt.date.today()
    try:
        table = load_prices(config.prices).with_endpoints(endpoint_prices(config.endpoints))
    except PriceError as exc:
        return config, [(("prices",), str(exc))]
    routes, problems = dict(config.routes), []
    for tier in wanted:
        route = routes[tier]
        current = sorted(
            (p.input + p.output, model)
            for model, p in table.rows(route.provider).items()
            if p.provider == route.provider and (p.retires is None or p.retires > today)
        )
        if not current:
            msg = f"the price table has no current model on {route.provider!r}; name a model"
            problems.append((("routes", tier, "model"), msg))
            continue
        routes[tier] = route.model_copy(update={"model": current[0][1]})
    return config.model_copy(update={"routes": routes}), problems


def check_prices(config: HarnessConfig, today: dt.date | None = None) -> PriceTable:
    """Load the price table (with the endpoints' own prices) and prove every route's model
    is priced on its provider and not retired.

    A model that no longer has a price, or whose announced retirement date has passed,
    is a start-up error: the night would otherwise fail on every call.
    """
    today = today or dt.date.today()
    doc = None
    if config.prices is not None:  # size, encoding, depth and duplicate keys; lines
        doc = _read_yaml(config.prices, "price table")
    try:
        table = _load_prices(config.prices, doc).with_endpoints(endpoint_prices(config.endpoints))
        for tier, route in config.routes.items():
            try:
                price = table.get(route.model, route.provider)
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
            (doc.line(*e["loc"]), dotted(tuple(e["loc"])), explain(e)) for e in exc.errors
        )
        lines = [f"{path}:{line}: {key}: {msg}" for line, key, msg in rows]
        raise PriceError(
            f"{len(lines)} problem(s) in the price table; nothing ran:\n  " + "\n  ".join(lines)
        ) from None
