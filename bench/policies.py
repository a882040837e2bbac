"""Loop policies compared on the calibrated simulator: each a `loop:` config for this harness,
run on the same tasks and seeds as the published loop; figures with bootstrap intervals over
task-nights, paired with the baseline's same task and seed for the ratios."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any

from bench.billing import assumptions
from bench.model import Night, TaskOutcome

__all__ = [
    "DERIVED",
    "INTERACTIVE",
    "NIGHT",
    "POLICIES",
    "SAME_BILLING",
    "compare_pools",
    "headline",
    "night_config",
    "policy_table",
]

# Variant name → the loop keys it runs with (None: the shipped loop, whatever it is). Every
# policy night is bought interactively (INTERACTIVE first in its harness.yaml): a night's
# replies do not depend on its billing, so its batch price is its recorded calls priced again
# (bench/billing.py), checked against one real night in rounds per bench run. The shipped
# defaults batch every step in rounds: their row is NIGHT; `harness` is the same loop bought
# interactively.
INTERACTIVE = "batch: {enabled: false}\n"
POLICIES: dict[str, str | None] = {
    "harness": None,
    "harness_published_policy": "loop:\n  escalate: false\n  stop_after_no_improvement: 50\n",
    "harness_no_review": "loop:\n  review: false\n",
    "harness_full_output": "loop:\n  fix_failures: full\n",
    "harness_no_prompt_cache": "prompt_cache: false\n",
    "harness_escalate_stop3": (
        "loop:\n  escalate: true\n  escalate_after: 1\n  stop_after_no_improvement: 3\n"
    ),
    "harness_whole_fixes": "loop:\n  fix_format: whole\n",
    # The review's tier on its provider's cheapest current model (harness.config: `model:
    # cheapest`; the route keeps its provider and output cap); the simulator reviews as the
    # cheap tier does whatever the model.
    "harness_review_cheapest": "routes:\n  cheap: {model: cheapest}\n",
}
# Rows priced from other rows' recorded calls (bench/billing.py), never run as nights of
# their own: the shipped loop as a night in batch rounds (caching on), and the published
# loop given the same caching and batch rounds (design and billing apart).
NIGHT = "harness_night"
SAME_BILLING = "baseline_same_billing"
DERIVED = (NIGHT, SAME_BILLING)
RESAMPLES = 2000


def night_config(policy: str | None) -> str:
    """The harness.yaml a policy night runs with: bought interactively, the policy's keys."""
    return INTERACTIVE + (policy or "")


LEVEL = 0.9  # two-sided interval


def _key(night: Night, task: TaskOutcome) -> tuple[int, str]:
    return night.seed, task.id


def _pool(nights: Sequence[Night], variant: str) -> dict[tuple[int, str], TaskOutcome]:
    return {_key(n, t): t for n in nights if n.variant == variant for t in n.tasks}


def _figures(tasks: Sequence[TaskOutcome]) -> tuple[float, float | None]:
    passing = sum(t.passing for t in tasks)
    cost = sum(t.cost_usd for t in tasks)
    return passing / len(tasks), (cost / passing if passing else None)


def _interval(values: list[float]) -> list[float] | None:
    if not values:
        return None
    values = sorted(values)
    lo = values[int((1 - LEVEL) / 2 * (len(values) - 1))]
    hi = values[int((1 + LEVEL) / 2 * (len(values) - 1))]
    return [round(lo, 4), round(hi, 4)]


def _compare(
    mine: dict[tuple[int, str], TaskOutcome], base: dict[tuple[int, str], TaskOutcome]
) -> dict[str, Any]:
    """Point figures and paired bootstrap intervals (resampling (seed, task) pairs)."""
    keys = sorted(mine.keys() & base.keys())
    rng = random.Random(0)  # the intervals are reproducible too
    boot: dict[str, list[float]] = {"pr": [], "cpp": [], "pr_ratio": [], "cpp_ratio": []}
    for _ in range(RESAMPLES):
        sample = [keys[rng.randrange(len(keys))] for _ in keys]
        pr, cpp = _figures([mine[k] for k in sample])
        bpr, bcpp = _figures([base[k] for k in sample])
        boot["pr"].append(pr)
        if bpr:
            boot["pr_ratio"].append(pr / bpr)
        if cpp is not None:
            boot["cpp"].append(cpp)
            if bcpp:
                boot["cpp_ratio"].append(cpp / bcpp)
    pr, cpp = _figures([mine[k] for k in keys])
    bpr, bcpp = _figures([base[k] for k in keys])
    return {
        "task_nights": len(keys),
        "pass_rate": pr,
        "pass_rate_interval": _interval(boot["pr"]),
        "cost_per_pass_usd": cpp,
        "cost_per_pass_interval": _interval(boot["cpp"]),
        "cost_usd": sum(mine[k].cost_usd for k in keys),
        "attempts_per_task": statistics.mean(mine[k].attempts for k in keys),
        "pass_rate_ratio": pr / bpr if bpr else None,
        "pass_rate_ratio_interval": _interval(boot["pr_ratio"]),
        "cost_per_pass_ratio": cpp / bcpp if cpp is not None and bcpp else None,
        "cost_per_pass_ratio_interval": _interval(boot["cpp_ratio"]),
    }


compare_pools = _compare  # for bench/batch.py: the same figures, any two pools


def policy_table(nights: Sequence[Night]) -> dict[str, Any]:
    """Every harness policy and the published loop's variants, against the published loop
    (the article's filtered fix prompt)."""
    base = _pool(nights, "baseline")
    rows = (
        *POLICIES,
        NIGHT,
        "baseline_full_output",
        "baseline_no_ratchet",
        SAME_BILLING,
        "baseline",
    )
    names = [v for v in rows if _pool(nights, v)]
    return {
        "level": LEVEL,
        "resamples": RESAMPLES,
        "against": "baseline",
        "policies": {v: _compare(_pool(nights, v), base) for v in names},
    }


def headline(
    table: dict[str, Any],
    capped: dict[str, Any] | None,
    same_across_c: bool | None,
    sensitivity: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The shipped defaults as a night (caching on, every step in batch rounds: NIGHT) ÷ the
    published loop as published (filtered fix prompt, no caching, interactive). The range is
    the lowest and highest value over the sensitivity sweep (every assumed parameter of the
    simulator and of the billing, bench/sensitivity.py) and this point. Beside it: the same
    night against the published loop given the same caching and rounds (design alone), and
    the loops with caching given to neither side and no batch (behaviour alone)."""
    shipped = table["policies"][NIGHT]
    out: dict[str, Any] = {
        "variant": f"{NIGHT} (shipped loop, caching on, every step in batch rounds)",
        "against": "baseline (the article's loop as published: no caching, interactive)",
        "task_nights": shipped["task_nights"],
        "billing": billing_note(),
        "cost_per_pass_ratio": shipped["cost_per_pass_ratio"],
        "cost_per_pass_ratio_interval": shipped["cost_per_pass_ratio_interval"],
        "pass_rate_ratio": shipped["pass_rate_ratio"],
        "pass_rate_ratio_interval": shipped["pass_rate_ratio_interval"],
        "same_outcomes_at_every_concurrency": same_across_c,
        "target_cost_per_pass_ratio_at_most": TARGET,
        "target_range_at_most": TARGET_RANGE,
        "target_pass_rate_ratio_at_least": TARGET_PASS,
    }
    ratio, passes = shipped["cost_per_pass_ratio"], shipped["pass_rate_ratio"]
    out["meets_target"] = bool(
        ratio is not None and ratio <= TARGET and passes is not None and passes >= TARGET_PASS
    )
    spread = (sensitivity or {}).get("ranges") or {}
    out["cost_per_pass_ratio_range"] = spread.get("cost_per_pass_ratio")
    out["pass_rate_ratio_range"] = spread.get("pass_rate_ratio")
    if spread.get("cost_per_pass_ratio"):
        out["meets_target_across_range"] = bool(spread["cost_per_pass_ratio"][1] <= TARGET_RANGE)
    same = table["policies"].get(SAME_BILLING)
    if same is not None:
        out["same_billing"] = {
            "variant": f"{SAME_BILLING} (the published loop, caching on, every step in rounds)",
            "its_cost_per_pass_ratio": same["cost_per_pass_ratio"],
            "its_cost_per_pass_ratio_interval": same["cost_per_pass_ratio_interval"],
            "night_over_it": _over(shipped, same),
        }
    alone = table["policies"].get("harness_no_prompt_cache")
    if alone is not None:
        out["loops_alone"] = {
            "variant": "harness_no_prompt_cache ÷ baseline: caching to neither side, no batch",
            "cost_per_pass_ratio": alone["cost_per_pass_ratio"],
            "cost_per_pass_ratio_interval": alone["cost_per_pass_ratio_interval"],
            "pass_rate_ratio": alone["pass_rate_ratio"],
        }
    if capped:
        out["tight_cap"] = {
            "cap_usd": capped["cap_usd"],
            "harness_passing": capped["harness_c1"]["passing"],
            "baseline_passing": capped["baseline"]["passing"],
        }
    return out


TARGET, TARGET_RANGE, TARGET_PASS = 0.5, 0.65, 0.97


def _over(mine: dict[str, Any], other: dict[str, Any]) -> float | None:
    a, b = mine["cost_per_pass_usd"], other["cost_per_pass_usd"]
    return a / b if a is not None and b else None


def billing_note() -> dict[str, Any]:
    """The billing a NIGHT row is priced under, each value with its label."""
    return {k: {"value": v["value"], "label": v["label"]} for k, v in assumptions().items()}
