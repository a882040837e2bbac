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
        "| target | expected | measured | tolerance | within | source |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['target']} | {r['expected']:.3f} | {r['measured']:.3f} | ±{r['tolerance']} | "
            f"{'yes' if r['within_tolerance'] else 'NO'} | {r['source']} |"
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
    lines = [
        f"- cost per passing task, shipped default ÷ published loop: "
        f"**{_num(h['cost_per_pass_ratio'], '.2f')}×** "
        f"{_iv(h['cost_per_pass_ratio_interval'], '.2f')} (target ≤ 0.6×)",
        f"- pass rate, shipped default ÷ published loop: **{_num(h['pass_rate_ratio'], '.2f')}×** "
        f"{_iv(h['pass_rate_ratio_interval'], '.2f')}",
        f"- same outcomes at concurrency 1, 4 and 8: {h['same_outcomes_at_every_concurrency']}; "
        f"meets the target: {h['meets_target']}",
    ]
    if cap:
        lines.append(
            f"- ${cap['cap_usd']} cap: harness passes {cap['harness_passing']}, "
            f"published loop {cap['baseline_passing']}"
        )
    return [*lines, ""]


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
    if results["figures"].get("batch"):
        out += ["### Batch mode on vs off", "", *_batch(results["figures"]["batch"])]
    return out
