"""Figures from measured nights, each next to the baseline measured in the same run."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

from bench.model import Night, Tokens
from bench.schedule import chain_s, critical_path_s, list_schedule_s, work_bound_s

__all__ = ["night_figures", "overhead", "quality", "ratio"]


def ratio(value: float | None, base: float | None) -> float | None:
    """value / base, or None when either is missing or the base is zero (undefined)."""
    if value is None or base is None or base == 0:
        return None
    out = value / base
    return out if math.isfinite(out) else None


def _share(amount: float, count: int) -> float | None:
    """amount / count, or None for no count."""
    return amount / count if count else None


def quality(nights: Iterable[Night]) -> dict[str, Any]:
    """Pass rate, cost per passing task, attempts, tokens, shipped-worse share, pooled."""
    nights = list(nights)
    tasks = [t for n in nights for t in n.tasks]
    passing = sum(t.passing for t in tasks)
    cost = sum(t.cost_usd for t in tasks)
    tokens = sum((t.tokens for t in tasks), Tokens())
    billed_input = tokens.fresh + tokens.cache_write + tokens.cache_read
    worse = sum(t.shipped_worse for t in tasks)
    return {
        "nights": len(nights),
        "seeds": sorted({n.seed for n in nights}),
        "tasks": len(tasks),
        "passing": passing,
        "pass_rate": _share(passing, len(tasks)),
        "cost_usd": cost,
        "cost_per_passing_usd": cost / passing if passing else None,
        "attempts_per_task": _share(sum(t.attempts for t in tasks), len(tasks)),
        "calls_per_task": _share(sum(t.calls for t in tasks), len(tasks)),
        "tokens": asdict(tokens),
        "cache_read_share_of_input": _share(tokens.cache_read, billed_input),
        "shipped_worse": worse,
        "shipped_worse_share": _share(worse, len(tasks)),
    }


def overhead(night: Night) -> dict[str, Any]:
    """Wall time that is neither provider time nor test-run time, per attempt (concurrency 1)."""
    provider = sum(t.provider_s for t in night.tasks)
    tests = sum(t.test_s for t in night.tasks)
    runs = sum(t.test_runs for t in night.tasks)
    attempts = sum(t.attempts for t in night.tasks)
    rest = night.wall_s - provider - tests
    return {
        "concurrency": night.concurrency,
        "attempts": attempts,
        "overhead_per_attempt_s": _share(rest, attempts),
        "test_run_s": _share(tests, runs),
        "provider_per_call_s": _share(provider, sum(t.calls for t in night.tasks)),
    }


def night_figures(night: Night, overhead_s: float, latency_factor: float) -> dict[str, Any]:
    """Measured wall time against its lower bounds, and the projection at real latency."""
    c = night.concurrency
    cp, bound = critical_path_s(night), work_bound_s(night, c)
    measured_chains = [chain_s(t, 1.0, overhead_s) for t in night.tasks]
    real_chains = [chain_s(t, latency_factor, overhead_s) for t in night.tasks]
    real_cp = critical_path_s(night, latency_factor, overhead_s)
    real_bound = max(real_cp, sum(real_chains) / c)
    projected = list_schedule_s(real_chains, c)
    modelled = list_schedule_s(measured_chains, c)
    return {
        "variant": night.variant,
        "concurrency": c,
        "wall_s": night.wall_s,
        "critical_path_s": cp,
        "wall_over_critical_path": ratio(night.wall_s, cp),
        "work_bound_s": bound,
        "wall_over_work_bound": ratio(night.wall_s, bound),
        # The projection's model run on the measured chains: how far it is from the clock.
        "model_wall_s": modelled,
        "model_over_measured": ratio(modelled, night.wall_s),
        "projected_wall_s": projected,
        "projected_critical_path_s": real_cp,
        "projected_wall_over_critical_path": ratio(projected, real_cp),
        "projected_wall_over_work_bound": ratio(projected, real_bound),
    }


def same_outcomes(nights: Sequence[Night]) -> bool:
    """True when every night reached the same per-task results (determinism across
    concurrency: the simulator keys every choice by seed, task, attempt and step)."""

    def shape(night: Night) -> list[tuple]:
        return [
            (t.id, t.best_passed, t.shipped_passed, t.attempts, round(t.cost_usd, 6))
            for t in night.tasks
        ]

    return all(shape(n) == shape(nights[0]) for n in nights)
