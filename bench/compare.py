"""Side by side: each variant next to the baseline measured in the same run, and the
invariants every bench run must keep."""

from __future__ import annotations

from typing import Any

from bench.figures import night_figures, overhead, quality, ratio, same_outcomes
from bench.model import Night

__all__ = ["checks", "outcome_figures", "timing_figures"]


def outcome_figures(nights: list[Night]) -> dict[str, Any]:
    """Per variant, pooled over seeds; the harness against the baseline as ratios."""
    variants = sorted({n.variant for n in nights})
    per = {v: quality(n for n in nights if n.variant == v) for v in variants}
    h, b = per["harness"], per["baseline"]
    per["ratios"] = {
        "pass_rate": ratio(h["pass_rate"], b["pass_rate"]),
        "cost_per_passing_usd": ratio(h["cost_per_passing_usd"], b["cost_per_passing_usd"]),
        "cost_usd": ratio(h["cost_usd"], b["cost_usd"]),
    }
    return per


def timing_figures(
    base: Night, harness: list[Night], latency_scale: float | None
) -> dict[str, Any]:
    """The timed nights against their bounds and the baseline; overhead at concurrency 1
    (`harness[0]`), which also sets each chain's overhead in the projection."""
    factor = latency_scale or 1.0
    costs = {"harness": overhead(harness[0]), "baseline": overhead(base)}
    per_attempt = {k: v["overhead_per_attempt_s"] or 0.0 for k, v in costs.items()}
    rows = [night_figures(base, per_attempt["baseline"], factor)]
    rows += [night_figures(n, per_attempt["harness"], factor) for n in harness]
    for row in rows:
        row["wall_over_baseline"] = ratio(row["wall_s"], rows[0]["wall_s"])
        row["projected_over_baseline"] = ratio(row["projected_wall_s"], rows[0]["projected_wall_s"])
    costs["ratios"] = {
        k: ratio(costs["harness"][k], costs["baseline"][k])
        for k in ("overhead_per_attempt_s", "test_run_s")
    }
    return {
        "latency_scale": latency_scale,
        "nights": rows,
        "overhead": costs,
        "same_outcomes_across_concurrency": same_outcomes(harness),
    }


def checks(figures: dict[str, Any], nights: list[Night]) -> dict[str, bool | None]:
    """Invariants every run must keep; the smoke test asserts them. None: nothing was
    measured for it in this run (a stage not run), never reported as kept."""
    ratchets = [t for n in nights if "no_ratchet" not in n.variant for t in n.tasks]
    capped = figures.get("tight_cap") or {}
    statuses = {t.status for n in nights for t in n.tasks}
    rounds = figures.get("rounds") or {}
    return {
        "no_harness_task_faulted": "error" not in statuses,
        "ratchet_never_ships_worse": all(not t.shipped_worse for t in ratchets),
        "shipped_file_is_an_attempt": all(t.shipped_passed >= 0 for t in ratchets),
        "harness_within_cap": all(
            capped[k]["spent_usd"] <= capped["cap_usd"] for k in capped if k.startswith("harness")
        )
        if capped
        else None,
        "same_outcomes_across_concurrency": (figures["night"] or {}).get(
            "same_outcomes_across_concurrency"
        ),
        "batch_priced_as_a_real_batch_night": _batch_checked(figures.get("batch")),
        "rounds_priced_as_a_real_rounds_night": _batch_checked(
            {"real_batch_night": rounds.get("real_rounds_night")} if rounds else None
        ),
        "calls_repriced_as_they_ran": _as_ran(rounds.get("calls_repriced_as_they_ran")),
    }


def _as_ran(found: dict[str, int] | None) -> bool | None:
    if not found or not found["nights"]:
        return None
    return found["equal"] == found["nights"]


def _batch_checked(batch: dict[str, Any] | None) -> bool | None:
    """The repriced nights stand for batch mode only if a real batch night spent the same
    (to the micro-dollar) with the same outcomes; None without a real night."""
    real = (batch or {}).get("real_batch_night")
    if real is None:
        return None
    repriced = real["repriced_twin_usd"]
    close = repriced is not None and abs(real["spent_usd"] - repriced) < 1e-6
    return close and real["same_outcomes"]
