"""Sensitivity: every policy against the published loop again at the low and at the high
plausible value of each parameter that no public figure pins (the `range` of its label in
harness/data/sim_model.yaml), on the same tasks and seeds. Prompt caching is off on every
side here: what moves is model behaviour, not billing."""

from __future__ import annotations

from functools import partial
from importlib import resources
from typing import Any

import yaml

from bench.billing import Billing, assumptions, rebilled
from bench.calibrate import calibrate
from bench.fanout import fan_out
from bench.model import Night
from bench.policies import NIGHT, SAME_BILLING, compare_pools
from bench.stages import Stages
from harness.sim import SimModel
from harness.tasks import TaskSpec

__all__ = ["HEADLINE", "SWEPT", "labels", "ranges", "survivors", "sweep"]

HEADLINE = "harness_no_prompt_cache"  # the shipped loop, caching given to neither side
SHIPPED = "harness"  # the shipped defaults, caching on: priced as a night in rounds (NIGHT)
# Each design choice: the policy that turns it off, against the shipped loop (both uncached).
CHOICES = {
    "review": "harness_no_review",
    "focused_fixes": "harness_full_output",
    "early_stop": "harness_published_policy",
    "escalation": "harness_escalate_stop3",
}
SWEPT = (HEADLINE, *CHOICES.values())
# Parameters whose ends move a figure measured with aider's protocol: re-measured there.
_CALIBRATION_AT = {
    "write.missing_context_bug": frozenset({"mid_try1_pass_rate", "mid_try2_pass_rate"}),
    "fix.break_nearby": frozenset({"mid_try1_pass_rate", "mid_try2_pass_rate"}),
    "fix.per_extra_failure": frozenset({"mid_try1_pass_rate", "mid_try2_pass_rate"}),
}


def labels() -> dict[str, dict[str, Any]]:
    """The `labels:` of the shipped sim_model.yaml."""
    text = resources.files("harness.data").joinpath("sim_model.yaml").read_text()
    return yaml.safe_load(text)["labels"]


def _uncached(variant: str) -> str:
    return variant if variant == HEADLINE else f"{variant}_uncached"


def _nights(st: Stages, name: str, model: SimModel) -> list[Night]:
    """Every swept policy and both published loops, on every sensitivity seed."""
    tagged = (name, model)
    nights: list[Night] = []
    for seed in st.s.sensitivity_seeds:
        nights.append(st.harness(seed, 4, False, SHIPPED, model=tagged))
        nights.append(st.baseline(seed, 2, False, model=tagged))
        if not st.s.sweep_choices:
            continue  # the headline's night and the published loop only
        nights += [st.harness(seed, 4, False, _uncached(v), model=tagged) for v in SWEPT]
        nights.append(
            st.baseline(
                seed, 2, False, variant="baseline_full_output", full_output=True, model=tagged
            )
        )
    return nights


def _point(nights: list[Night]) -> dict[str, Any]:
    """Every swept policy and the full-dump loop ÷ the published loop, at one model."""

    def pool(variant: str) -> dict:
        return {(n.seed, t.id): t for n in nights if n.variant == variant for t in n.tasks}

    base = pool("baseline")
    rows = {v: compare_pools(pool(_uncached(v)), base) for v in SWEPT if pool(_uncached(v))}
    if pool("baseline_full_output"):
        rows["baseline_full_output"] = compare_pools(pool("baseline_full_output"), base)
    shipped = pool(SHIPPED)
    rows[NIGHT] = compare_pools(rebilled(shipped, Billing.night()), base)
    rows[SAME_BILLING] = compare_pools(rebilled(base, Billing.night()), base)
    keep = ("pass_rate", "cost_per_pass_usd", "pass_rate_ratio", "cost_per_pass_ratio")
    out: dict[str, Any] = {v: {k: r[k] for k in keep} for v, r in rows.items()}
    billing: dict[str, Any] = {}
    for name, label in assumptions().items():
        if "range" not in label:
            continue
        billing[name] = {}
        for end in ("low", "high"):
            row = compare_pools(
                rebilled(shipped, Billing.night(**{name: label["range"][end]})), base
            )
            billing[name][end] = {k: row[k] for k in keep}
    out["billing"] = billing
    return out


def sweep(
    st: Stages, calibration_specs: list[TaskSpec], seeds: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The centre (the shipped model) and one row per parameter with a `range`: its label,
    and at each end the values set, the headline, every swept policy, and (where the end
    moves an aider-protocol figure) the calibration there. The points are independent: they
    run across the cores (bench/fanout.py), and come back in this order."""
    shipped = SimModel.shipped()
    swept = [(param, label) for param, label in labels().items() if "range" in label]
    ends = [(param, end, label["range"][end]) for param, label in swept for end in ("low", "high")]
    jobs = [partial(_centre, shipped)] + [
        partial(_end, param, end, shipped.with_values(values), values, calibration_specs, seeds)
        for param, end, values in ends
    ]
    center, *points = fan_out(st, jobs)
    rows = []
    for param, label in swept:
        row: dict[str, Any] = {"parameter": param, "label": label["label"]}
        for end in ("low", "high"):
            row[end] = points.pop(0)
        rows.append(row)
    for name, ends in center.pop("billing").items():  # priced again, no night run again
        label = assumptions()[name]
        row = {"parameter": f"billing.{name}", "label": label["label"], "kind": "billing"}
        for end in ("low", "high"):
            row[end] = {
                "values": {name: label["range"][end]},
                "cost_per_pass_ratio": ends[end]["cost_per_pass_ratio"],
                "pass_rate_ratio": ends[end]["pass_rate_ratio"],
            }
        rows.append(row)
    return center, rows


def _centre(shipped: SimModel, st: Stages) -> dict[str, Any]:
    return _point(_nights(st, "centre", shipped))


def _end(
    param: str,
    end: str,
    model: SimModel,
    values: dict[str, Any],
    calibration_specs: list[TaskSpec],
    seeds: int,
    st: Stages,
) -> dict[str, Any]:
    """One end of one parameter's range: the policies there, and its calibration if any."""
    point = _point(_nights(st, f"{param}-{end}", model))
    point.pop("billing")
    at: dict[str, Any] = {"values": values, "policies": point}
    at["cost_per_pass_ratio"] = point[NIGHT]["cost_per_pass_ratio"]
    at["pass_rate_ratio"] = point[NIGHT]["pass_rate_ratio"]
    at["loops_alone_cost_per_pass_ratio"] = point.get(HEADLINE, {}).get("cost_per_pass_ratio")
    if param in _CALIBRATION_AT and seeds:
        at["calibration"] = calibrate(calibration_specs, seeds, model, only=_CALIBRATION_AT[param])
    st.note(f"sensitivity {param} {end}: {at['cost_per_pass_ratio']:.2f}× cost per pass")
    return at


def survivors(center: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """For each design choice: at how many points (centre and every end) turning it off costs
    more per pass, and at how many it passes fewer tasks; a choice that wins at every point
    survives the sweep."""
    points = [center] + [
        row[end]["policies"] for row in rows if "kind" not in row for end in ("low", "high")
    ]
    out: dict[str, Any] = {"points": len(points), "choices": {}}
    for choice, off in CHOICES.items():
        if any(off not in p for p in points):
            continue  # the sweep ran without the design choices (--no-sweep-choices)
        cheaper = sum(
            _lt(p[HEADLINE]["cost_per_pass_usd"], p[off]["cost_per_pass_usd"]) for p in points
        )
        better = sum(p[HEADLINE]["pass_rate"] >= p[off]["pass_rate"] for p in points)
        out["choices"][choice] = {
            "turned_off_by": off,
            "on_cheaper_per_pass_at": cheaper,
            "on_passes_at_least_as_many_at": better,
            "survives": cheaper == len(points) and better == len(points),
        }
    return out


def _lt(a: float | None, b: float | None) -> bool:
    return a is not None and (b is None or a <= b)


def ranges(center: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """The headline's lowest and highest value over the centre and every swept end."""
    out = {}
    for key in ("cost_per_pass_ratio", "pass_rate_ratio"):
        values = [center[NIGHT][key]] + [row[end][key] for row in rows for end in ("low", "high")]
        values = [v for v in values if v is not None]
        out[key] = [round(min(values), 4), round(max(values), 4)] if values else None
    return out
