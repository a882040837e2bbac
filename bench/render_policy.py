"""The calibration, policy and headline tables of the results document, as markdown."""

from __future__ import annotations

from typing import Any

__all__ = ["render_policy"]


def _iv(values: list[float] | None, fmt: str) -> str:
    return "—" if not values else f"[{values[0]:{fmt}}, {values[1]:{fmt}}]"


def _num(value: float | None, fmt: str) -> str:
    return "—" if value is None else f"{value:{fmt}}"


def _calibration(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "`fitted`: harness/data/sim_model.yaml was fitted to it; `predicted`: held out, never "
        "seen by the fit (error = measured − expected).",
        "",
        "| target | kind | protocol | expected | measured | error | tolerance | within | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['target']} | {r['kind']} | {r['protocol']} | {r['expected']:.3f} "
            f"| {r['measured']:.3f} | {r['error']:+.3f} | ±{r['tolerance']} "
            f"| {'yes' if r['within_tolerance'] else 'NO'} | {r['source']} |"
        )
    missed = [r for r in rows if not r["within_tolerance"]]
    for r in missed:
        moved = ", ".join(r.get("moved_by") or []) or "no parameter named"
        out.append(f"- {r['target']} missed; the swept parameter(s) that would move it: {moved}")
    if missed:
        out.append(
            "- the try-2 and no-ratchet protocols show 2 failing tests per bug "
            "(`failures_per_bug`, assumed)"
        )
    return [*out, ""]


def _policies(table: dict[str, Any]) -> list[str]:
    level = int(100 * table["level"])
    out = [
        f"Intervals: {level}% paired bootstrap over (seed, task) task-nights, "
        f"{table['resamples']} resamples; ratios are ÷ the published loop on the same task-nights.",
        "",
        "| policy | pass rate | cost per pass | pass rate ÷ published | cost per pass ÷ published "
        "| attempts per task | total cost |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, p in table["policies"].items():
        out.append(
            f"| {name} | {_num(p['pass_rate'], '.1%')} {_iv(p['pass_rate_interval'], '.1%')} "
            f"| {_num(p['cost_per_pass_usd'], '.4f')} {_iv(p['cost_per_pass_interval'], '.4f')} "
            f"| {_num(p['pass_rate_ratio'], '.2f')}× {_iv(p['pass_rate_ratio_interval'], '.2f')} "
            f"| {_num(p['cost_per_pass_ratio'], '.2f')}× "
            f"{_iv(p['cost_per_pass_ratio_interval'], '.2f')} "
            f"| {p['attempts_per_task']:.2f} | ${p['cost_usd']:.4f} |"
        )
    return [*out, ""]


def _headline(h: dict[str, Any]) -> list[str]:
    cap = h.get("tight_cap")
    billing = ", ".join(f"{k} {v['value']} ({v['label']})" for k, v in h["billing"].items())
    lines = [
        "The shipped defaults as a night (prompt caching on, every step in batch rounds, "
        "priced from the shipped loop's recorded calls: bench/billing.py) ÷ the published loop "
        f"as published (filtered fix prompt, no caching, interactive), over {h['task_nights']} "
        f"task-nights. Billing: {billing}. Range: lowest and highest over the sensitivity "
        "sweep below (every assumed parameter of the simulator and of the billing).",
        "",
        f"- cost per passing task: **{_num(h['cost_per_pass_ratio'], '.2f')}×** "
        f"{_iv(h['cost_per_pass_ratio_interval'], '.2f')}; over the sweep "
        f"**{_iv(h['cost_per_pass_ratio_range'], '.2f')}** (target ≤ "
        f"{h['target_cost_per_pass_ratio_at_most']}× at the centre, ≤ "
        f"{h['target_range_at_most']}× over the sweep)",
        f"- pass rate: **{_num(h['pass_rate_ratio'], '.2f')}×** "
        f"{_iv(h['pass_rate_ratio_interval'], '.2f')}; over the sweep "
        f"**{_iv(h['pass_rate_ratio_range'], '.2f')}** (target ≥ "
        f"{h['target_pass_rate_ratio_at_least']}× at the centre)",
        f"- meets the target at the centre: {h['meets_target']}; across the sweep: "
        f"{h.get('meets_target_across_range', '—')}",
    ]
    same = h.get("same_billing")
    if same:
        lines.append(
            "- the published loop given the same caching and batch rounds: "
            f"{_num(same['its_cost_per_pass_ratio'], '.2f')}× "
            f"{_iv(same['its_cost_per_pass_ratio_interval'], '.2f')} its published cost per "
            f"pass; the shipped night ÷ it: **{_num(same['night_over_it'], '.2f')}×** (the "
            "design alone, billing equal)"
        )
    alone = h.get("loops_alone")
    if alone:
        lines.append(
            "- the loops alone (caching to neither side, no batch): "
            f"{_num(alone['cost_per_pass_ratio'], '.2f')}× "
            f"{_iv(alone['cost_per_pass_ratio_interval'], '.2f')} cost per pass, "
            f"{_num(alone['pass_rate_ratio'], '.2f')}× pass rate"
        )
    if h["same_outcomes_at_every_concurrency"] is not None:
        lines.append(
            f"- same outcomes at concurrency 1, 4 and 8: {h['same_outcomes_at_every_concurrency']}"
        )
    if cap:
        lines.append(
            f"- ${cap['cap_usd']} cap: harness passes {cap['harness_passing']}, "
            f"published loop {cap['baseline_passing']}"
        )
    return [*lines, ""]


def _values(values: dict[str, Any]) -> str:
    def short(v: Any) -> str:
        if isinstance(v, dict):
            return "/".join(str(x) for x in v.values())
        return str(v)

    return ", ".join(f"{k.split('.', 1)[-1]}={short(v)}" for k, v in values.items())


def _sensitivity(s: dict[str, Any]) -> list[str]:
    """The tornado table: the headline at each end of each swept parameter, widest first."""
    center = s["center"]["harness_night"]
    rows = sorted(
        s["parameters"],
        key=lambda r: (
            -abs((r["high"]["cost_per_pass_ratio"] or 0) - (r["low"]["cost_per_pass_ratio"] or 0))
        ),
    )
    out = [
        f"Seeds {s['seeds']}; the headline (the shipped night ÷ the published loop) at each "
        "end; `billing.` rows price the centre's nights again. The centre (shipped model): "
        f"{_num(center['cost_per_pass_ratio'], '.2f')}× cost per pass, "
        f"{_num(center['pass_rate_ratio'], '.2f')}× pass rate. Widest swing first.",
        "",
        "| parameter | label | low end | cost per pass ÷ published | pass rate ÷ published "
        "| high end | cost per pass ÷ published | pass rate ÷ published |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lo, hi = r["low"], r["high"]
        out.append(
            f"| {r['parameter']} | {r['label']} | {_values(lo['values'])} "
            f"| {_num(lo['cost_per_pass_ratio'], '.2f')}× | {_num(lo['pass_rate_ratio'], '.2f')}× "
            f"| {_values(hi['values'])} | {_num(hi['cost_per_pass_ratio'], '.2f')}× "
            f"| {_num(hi['pass_rate_ratio'], '.2f')}× |"
        )
    out += ["", *_recalibrated(rows)]
    if s["survivors"]["choices"]:
        out += _survivors(s["survivors"])
    return out


def _recalibrated(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        for end in ("low", "high"):
            for c in r[end].get("calibration", []):
                out.append(
                    f"- {r['parameter']} at its {end} end: {c['target']} {c['measured']:.3f} "
                    f"(expected {c['expected']:.3f} ±{c['tolerance']}: "
                    f"{'met' if c['within_tolerance'] else 'NOT met'})"
                )
    return [*out, ""] if out else []


def _survivors(s: dict[str, Any]) -> list[str]:
    out = [
        f"Design choices over all {s['points']} points (centre and every end), uncached on "
        "both sides: the shipped loop against the same loop with the choice turned off.",
        "",
        "| choice | turned off by | on is cheaper per pass at | on passes at least as many at "
        "| survives the sweep |",
        "|---|---|---|---|---|",
    ]
    for name, c in s["choices"].items():
        out.append(
            f"| {name} | {c['turned_off_by']} | {c['on_cheaper_per_pass_at']}/{s['points']} "
            f"| {c['on_passes_at_least_as_many_at']}/{s['points']} "
            f"| {'yes' if c['survives'] else 'no'} |"
        )
    return [*out, ""]


def _batch(b: dict[str, Any]) -> list[str]:
    off, on = b["off"], b["on_vs_off"]
    lines = [
        "Attempt 1's writes by batch (half price) against the same nights all interactive; "
        "same (seed, task) task-nights, paired intervals. Batch mode adds its latency (minutes "
        "to hours) to every task's start; outcomes are the same.",
        "",
        "| batch mode | pass rate | cost per pass | cost per pass ÷ off | total cost |",
        "|---|---|---|---|---|",
        f"| off | {_num(off['pass_rate'], '.1%')} "
        f"| {_num(off['cost_per_pass_usd'], '.4f')} {_iv(off['cost_per_pass_interval'], '.4f')} "
        f"| 1.00× | ${off['cost_usd']:.4f} |",
        f"| on | {_num(on['pass_rate'], '.1%')} "
        f"| {_num(on['cost_per_pass_usd'], '.4f')} {_iv(on['cost_per_pass_interval'], '.4f')} "
        f"| {_num(on['cost_per_pass_ratio'], '.2f')}× "
        f"{_iv(on['cost_per_pass_ratio_interval'], '.2f')} | ${on['cost_usd']:.4f} |",
        "",
    ]
    real = b.get("real_batch_night")
    if real:
        lines += [
            f"A real batch night (seed {real['seed']}) spent ${real['spent_usd']:.6f}; its "
            f"interactive twin repriced: ${_num(real['repriced_twin_usd'], '.6f')}; same "
            f"outcomes: {real['same_outcomes']}.",
            "",
        ]
    return lines


def _rounds(r: dict[str, Any]) -> list[str]:
    ran = r["calls_repriced_as_they_ran"]
    lines = [
        f"Every night's recorded calls priced as the night ran: {ran['equal']} of "
        f"{ran['nights']} nights to the micro-dollar of what they spent.",
    ]
    real = r.get("real_rounds_night")
    if real:
        lines.append(
            f"A real night in batch rounds on the simulator (seed {real['seed']}, every step "
            f"through sim.SimBatch) spent ${real['spent_usd']:.6f}; its interactive twin priced "
            f"in rounds: ${_num(real['repriced_twin_usd'], '.6f')}; same outcomes: "
            f"{real['same_outcomes']}."
        )
    return [*lines, ""]


def render_policy(results: dict[str, Any]) -> list[str]:
    """Headline, calibration and policy tables (empty when the run has none)."""
    out: list[str] = []
    if results.get("headline"):
        out += ["### Headline", "", *_headline(results["headline"])]
    if results.get("calibration"):
        out += [
            "### Calibration (bench/calibration.yaml)",
            "",
            *_calibration(results["calibration"]),
        ]
    if results["figures"].get("policies"):
        out += ["### Loop policies", "", *_policies(results["figures"]["policies"])]
    if results.get("sensitivity"):
        out += ["### Sensitivity (tornado)", "", *_sensitivity(results["sensitivity"])]
    if results["figures"].get("batch"):
        out += ["### Batch mode on vs off", "", *_batch(results["figures"]["batch"])]
    if results["figures"].get("rounds"):
        out += [
            "### The night in rounds, priced and run",
            "",
            *_rounds(results["figures"]["rounds"]),
        ]
    return out
