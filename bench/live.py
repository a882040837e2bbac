"""`make bench-live` (`python -m bench --live`): the policy comparison of `make bench`, run
against the live providers on a small task list under a hard cap; skipped (exit 0) without
the keys. Every call of every night, the published loop's included, goes through the
harness's paid-call layer, which reserves a call's worst case before sending it: the cap is
never crossed, and the operator's day ledger sees the spend."""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from bench.baseline import BudgetStop, run_baseline
from bench.compare import checks, outcome_figures
from bench.harness_night import run_harness
from bench.machine import describe, load_average
from bench.model import Night
from bench.policies import INTERACTIVE, NIGHT, POLICIES, headline, night_config, policy_table
from bench.render import render
from bench.workspace import EXAMPLE
from harness.budget import Budget, BudgetExceeded
from harness.calls import Caller, RunStopped
from harness.config import HarnessConfig, check_prices, load_config
from harness.llm import CallRequest, Completion, Provider
from harness.providers import build_adapter
from harness.runner.inputs import endpoints_of
from harness.store import RunDir
from harness.tasks import load_tasks

__all__ = ["DEFAULT_CAP_USD", "KEYS", "main", "missing_keys", "record"]

DEFAULT_CAP_USD = 5.0  # the whole comparison, every night together: ~$1 a night
# Provider → the environment variables its SDK reads the key from (any one will do); a named
# endpoint's is its `api_key_env` (none for a local server).
KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
}
RESULTS = Path(__file__).resolve().parent / "results" / "live.json"
# Every live night's output cap per call: a call reserves its prompt plus this much output
# before it goes, so the shipped 32k-64k caps would hold most of a small share for one call.
# The example tasks' modules fit well under it.
LIVE_MAX_TOKENS = 8192
# The night in batch rounds (every step through the vendors' batch APIs, fixes as edits by
# default): its own night beside the policies. A round may take up to the vendor's
# turnaround (most Anthropic batches end within an hour), so a live run waits that long per
# round; past its deadline the rest goes interactive. The offline test polls faster.
ROUNDS_DEADLINE = "3h"
ROUNDS_POLL_S = 30.0
NIGHTS = 2 + len(POLICIES)  # the published loop, each policy, the night in rounds


def _rounds_config(poll_s: float) -> str:
    return (
        "batch: {enabled: true, steps: [write, review, rewrite, fix], "
        f'deadline: "{ROUNDS_DEADLINE}", poll_s: {poll_s}, '
        f"max_poll_s: {max(poll_s, 300.0)}, round_window_s: 5}}\n"
    )


def _live_config(config: HarnessConfig) -> str:
    """The harness.yaml every live night shares: the operator's routes, steps, endpoints and
    prices (--config; the shipped defaults without it), each route's output cap lowered."""
    routes = {
        t: {
            "provider": r.provider,
            "model": r.model,
            "max_tokens": min(r.max_tokens, LIVE_MAX_TOKENS),
            "service_tier": r.service_tier.value,
        }
        for t, r in config.routes.items()
    }
    endpoints = {n: e.model_dump(mode="json") for n, e in config.endpoints.items()}
    data: dict[str, Any] = {"routes": routes, "steps": dict(config.steps), "endpoints": endpoints}
    if config.prices is not None:
        data["prices"] = str(config.prices)
    return yaml.safe_dump(data, sort_keys=False)  # block style: a policy's keys are appended


def _smallest_share(config: HarnessConfig) -> Decimal:
    """A night's share must hold one write call's output at its cap, or nothing can start."""
    route = config.routes[config.steps["write"]]
    price = check_prices(config).get(route.model, route.provider)
    return route.max_tokens * price.output / 1_000_000 * 2


def _providers(config: HarnessConfig) -> list[str]:
    """Every provider a compared policy may call: the steps' tiers and the escalation tier."""
    tiers = {*config.steps.values(), config.loop.escalate_to}
    return sorted({config.routes[t].provider for t in tiers})


def missing_keys(config: HarnessConfig, environ: Mapping[str, str]) -> list[str]:
    """What to set before a live night can run: one line per provider without a key."""
    keys = dict(KEYS)
    keys.update({n: (e.api_key_env,) for n, e in config.endpoints.items() if e.api_key_env})
    return [
        " or ".join(keys[name])
        for name in _providers(config)
        if name in keys and not any(environ.get(k) for k in keys[name])
    ]


@dataclass
class _PaidCalls(Provider):
    """A Provider for the published loop that sends through the harness's Caller, so its
    calls are reserved before they go (the loop itself checks the cap only after)."""

    caller: Caller
    name: str = "live"

    def complete(self, request: CallRequest) -> Completion:
        try:
            return self.caller.call(request).completion
        except (BudgetExceeded, RunStopped) as exc:
            raise BudgetStop(str(exc)) from exc


def _baseline(specs: list, share: Decimal, out: Path, config_path: Path) -> Night:
    config = load_config(config_path)
    names = sorted({r.provider for r in config.routes.values()})
    endpoints = endpoints_of(config)
    adapters = {
        n: build_adapter(n, timeout_s=config.provider_timeout_s, endpoints=endpoints) for n in names
    }
    budget = Budget.from_config(config.budget, budget_usd=share)
    caller = Caller(
        adapters, check_prices(config), budget, RunDir(out, "baseline"), config.provider_limits
    )
    return run_baseline(
        specs,
        _PaidCalls(caller),
        seed=0,
        out=out / "baseline-out",
        cap_usd=float(share),
        route_to=None,
        config_path=config_path,
    )


def _share(cap: Decimal) -> Decimal:
    return (cap / NIGHTS).quantize(Decimal("0.0001"), rounding="ROUND_DOWN")


def _fresh_copy(tasks_yaml: Path, folder: Path) -> Path:
    """The task list's folder copied, without any output already shipped: a night seeds a
    task from a file at its output path, so nights sharing outputs would not be independent."""
    shutil.copytree(tasks_yaml.parent, folder)
    copy = folder / tasks_yaml.name
    for spec in load_tasks(copy):
        spec.output.unlink(missing_ok=True)
    return copy


def _nights(
    tasks_yaml: Path,
    cap: Decimal,
    scratch: Path,
    config: Path | None = None,
    poll_s: float | None = None,
) -> list[Night]:
    """The published loop, then each harness policy, each under an equal share of the cap;
    `poll_s`: the night in rounds' first wait between polls (default ROUNDS_POLL_S)."""
    share = _share(cap)
    base = scratch / "live.yaml"
    base.write_text(_live_config(load_config(config)))
    baseline_specs = load_tasks(_fresh_copy(tasks_yaml, scratch / "ws" / "baseline"))
    nights = [_baseline(baseline_specs, share, scratch / "baseline", base)]
    rounds = _rounds_config(ROUNDS_POLL_S if poll_s is None else poll_s)
    for variant, policy in [*POLICIES.items(), (NIGHT, rounds)]:
        path = scratch / f"{variant}.yaml"
        text = policy if variant == NIGHT else night_config(policy)  # bench/policies.py
        path.write_text(_with_policy(base.read_text(), text))
        nights.append(
            run_harness(
                _fresh_copy(tasks_yaml, scratch / "ws" / variant),
                scratch / "runs" / variant,
                seed=0,
                concurrency=2,
                cap_usd=float(share),
                config=path,
                variant=variant,
                live=True,
            )
        )
        print(f"{variant}: ${nights[-1].spent_usd:.4f} of ${share}", file=sys.stderr, flush=True)
    return nights


def _with_policy(base: str, policy: str | None) -> str:
    """The night's config: the shared one with the policy's keys merged in, mapping by
    mapping as a harness.yaml is merged into the defaults (a policy's `routes: {cheap:
    {model: cheapest}}` keeps the shared cheap route's provider and output cap)."""
    if not policy:
        return base
    return yaml.safe_dump(_merged(yaml.safe_load(base), yaml.safe_load(policy)), sort_keys=False)


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        mine = out.get(key)
        out[key] = (
            _merged(mine, value) if isinstance(mine, dict) and isinstance(value, dict) else value
        )
    return out


def record(
    nights: list[Night], args: argparse.Namespace, machine: dict[str, Any], took: float
) -> dict[str, Any]:
    """The results document of `make bench` (bench/suite.py), for the live nights: the same
    keys, so the same renderer and the same comparisons read it. What a live run has not
    (calibration, sensitivity, timed or capped nights, the big list) is empty, as in a
    --policies-only run; `provider` and the cap say what it was."""
    policies = policy_table(nights)
    figures: dict[str, Any] = {
        "batch": None,
        "rounds": None,  # the night in rounds is a real night here, not priced
        "outcomes": outcome_figures(nights),
        "policies": policies,
        "night": None,
        "tight_cap": None,
        "big_list": None,
        "sandbox_bench": None,
        # simulator stages, not run against the live providers (context tools live:
        # bench/results/live_context.json)
        "context_tools": None,
        "isolation": None,
        "js_boundary": None,
        "scale": None,
        "diet": None,  # the fix-prompt diet: on the simulator (bench/diet.py)
        "judge": None,
        "test_memo": {},
        "nights_reused": 0,
    }
    spent = sum(n.spent_usd for n in nights)
    machine["load_average_at_end"] = load_average()
    return {
        "schema": 3,
        "provider": "live",
        "machine": machine,
        "settings": {
            "tasks_yaml": str(args.tasks_yaml),
            "seeds": [0],
            "policies_only": True,
            "cap_usd": str(args.cap_usd),
            "live_max_tokens": LIVE_MAX_TOKENS,
        },
        "duration_s": took,
        "headline": headline(policies, None, None),
        "calibration": [],
        "sensitivity": None,
        "figures": figures,
        "checks": {**checks(figures, nights), "within_cap": spent <= float(args.cap_usd)},
        "nights": [n.to_json() for n in nights],
        "cap_usd": str(args.cap_usd),
        "spent_usd": spent,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench --live", description=__doc__)
    parser.add_argument("--live", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tasks-yaml", type=Path, default=EXAMPLE / "tasks.yaml")
    parser.add_argument(
        "--cap-usd",
        type=Decimal,
        default=Decimal(os.environ.get("BENCH_LIVE_CAP_USD", str(DEFAULT_CAP_USD))),
        help="hard cap for the whole comparison, split evenly over the nights "
        f"(default ${DEFAULT_CAP_USD}, or $BENCH_LIVE_CAP_USD)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="a harness.yaml whose routes, steps and endpoints the nights use (e.g. every "
        "step on OpenAI or on an OpenAI-compatible endpoint); default: the shipped routes",
    )
    parser.add_argument(
        "--context",
        action="store_true",
        help="the context tools A/B (bench/context.py) instead of the policies: results in "
        "results/live_context.json",
    )
    return parser


def main(argv: list[str]) -> int:
    """Skip without keys; else run the nights and write their record (the format of
    `make bench`'s, bench/results/latest.json) and its tables (.md beside it)."""
    args = _parser().parse_args(argv)
    missing = missing_keys(load_config(args.config), os.environ)
    if missing and args.context:
        print(f"bench-live --context skipped: no key for {'; '.join(missing)}", file=sys.stderr)
        return 0
    if missing:
        print(
            "bench-live: no key for "
            + "; ".join(missing)
            + ", so this is a rehearsal: the same nights through the real SDKs against fake "
            "vendors on 127.0.0.1 (dummy keys, scripted replies: nothing spent, nothing "
            "measured). Set them to measure the policies on the live providers (it spends "
            f"real money, at most --cap-usd, ${args.cap_usd}).",
            file=sys.stderr,
        )
        return _rehearse(args)
    scratch_config = Path(tempfile.mkdtemp(prefix="harness-bench-live-config-")) / "live.yaml"
    scratch_config.write_text(_live_config(load_config(args.config)))
    floor = _smallest_share(load_config(scratch_config)) * NIGHTS
    shutil.rmtree(scratch_config.parent)
    if not args.cap_usd >= floor:
        print(
            f"--cap-usd {args.cap_usd}: too small to start {NIGHTS} nights (each "
            f"needs room for a few calls at {LIVE_MAX_TOKENS} output tokens); give at least "
            f"{floor:.2f}",
            file=sys.stderr,
        )
        return 2
    if args.context:
        return _context(args)
    started, machine = time.perf_counter(), describe()
    with tempfile.TemporaryDirectory(prefix="harness-bench-live-") as scratch:
        nights = _nights(args.tasks_yaml, args.cap_usd, Path(scratch), args.config)
    results = record(nights, args, machine, time.perf_counter() - started)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    table = render(results)
    args.out.with_suffix(".md").write_text(table)
    print(table)
    print(f"results: {args.out}; spent ${results['spent_usd']:.4f}", file=sys.stderr)
    return 0


def _rehearse(args: argparse.Namespace) -> int:
    """Every night of a live run against the fake vendors (bench/rehearse.py), with the
    shipped routes, under --cap-usd; its record beside the runs (never bench/results/)."""
    from bench.rehearse import REHEARSAL_OUT, fake_night_vendors, rehearsal_tasks

    started, machine = time.perf_counter(), describe()
    with (
        tempfile.TemporaryDirectory(prefix="harness-bench-rehearsal-") as scratch,
        fake_night_vendors() as vendors,
    ):
        tasks = rehearsal_tasks(Path(scratch) / "task")
        nights = _nights(tasks, args.cap_usd, Path(scratch), poll_s=0.05)
        batches = (vendors.anthropic.batches.creates["anthropic"],
                   vendors.gemini.batches.creates["gemini"])  # fmt: skip
        fixes = [r for r in vendors.anthropic.batches.batches.values() if "fix" in str(r.requests)]
        edits = any("SEARCH/REPLACE" in json.dumps(r.requests) for r in fixes)
    results = record(nights, args, machine, time.perf_counter() - started)
    results["provider"] = "rehearsal: fake vendors, scripted replies"
    out = REHEARSAL_OUT if args.out == RESULTS else args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(render(results))
    ok = results["checks"]["within_cap"] and all(v is not False for v in results["checks"].values())
    print(
        f"rehearsal: {len(nights)} nights, spent ${results['spent_usd']:.4f} of the cap "
        f"${args.cap_usd} (fake money); the night in rounds: {batches[0]} Anthropic and "
        f"{batches[1]} Gemini batches, its fix asked for SEARCH/REPLACE edits: {edits}; "
        f"record: {out}",
        file=sys.stderr,
    )
    return 0 if ok and edits else 1


def _context(args: argparse.Namespace) -> int:
    """Context tools off and on, lists with and without capabilities/examples, live: four
    nights, each under a quarter of the cap."""
    from bench.context import LISTS, context_table, nights, render_context

    share = float(args.cap_usd) / (2 * len(LISTS))

    def night(tasks: Path, runs: Path, config: Path, variant: str, seed: int) -> Night:
        ran = run_harness(tasks, runs, seed=seed, concurrency=2, cap_usd=share, config=config,
                          variant=variant, live=True)  # fmt: skip
        print(f"{variant}: ${ran.spent_usd:.4f} of ${share:.4f}", file=sys.stderr, flush=True)
        return ran

    with tempfile.TemporaryDirectory(prefix="harness-bench-live-context-") as scratch:
        copy = functools.partial(_fresh_copy, args.tasks_yaml)
        base = _live_config(load_config(args.config)) + INTERACTIVE
        ran = nights(Path(scratch), (0,), night, copy, base)
    figure = context_table(ran, note="Live providers: what the models chose to read.")
    out = args.out if args.out != RESULTS else RESULTS.with_name("live_context.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figure, indent=1) + "\n")
    print("\n".join(render_context(figure)))
    return 0
