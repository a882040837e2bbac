"""The results document as the markdown tables docs/benchmarks.md shows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.context import render_context
from bench.diet import render_diet
from bench.judge import render_judge
from bench.render_policy import render_policy
from bench.render_runner import render_runner

__all__ = ["render"]

Fmt = Callable[[Any], str]


def _na(fn: Fmt) -> Fmt:
    return lambda v: "—" if v is None else fn(v)


PCT: Fmt = _na(lambda v: f"{100 * v:.1f}%")
USD: Fmt = _na(lambda v: f"${v:.4f}")
SEC: Fmt = _na(lambda v: f"{v:.2f} s" if v >= 0.1 else f"{1000 * v:.1f} ms")
RATIO: Fmt = _na(lambda v: f"{v:.2f}×")
NUM: Fmt = _na(lambda v: f"{v:.2f}")
MIB: Fmt = _na(lambda v: f"{v:.1f} MiB")


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" for _ in head) + "|",
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
    ]


_OUTCOME_ROWS: list[tuple[str, str, Fmt]] = [
    ("pass rate (shipped file passes every test)", "pass_rate", PCT),
    ("cost per passing task", "cost_per_passing_usd", USD),
    ("total cost", "cost_usd", USD),
    ("attempts per task", "attempts_per_task", NUM),
    ("paid calls per task", "calls_per_task", NUM),
    ("input tokens served from cache", "cache_read_share_of_input", PCT),
    ("tasks shipped worse than their best attempt", "shipped_worse_share", PCT),
]


def _outcomes(o: dict[str, Any]) -> list[str]:
    h, b = o["harness"], o["baseline"]
    extra = [
        v
        for v in ("baseline_full_output", "baseline_no_ratchet", "harness_published_policy")
        if v in o
    ]
    head = ["figure", "harness", "baseline (published loop)", "harness ÷ baseline", *extra]
    rows = []
    for label, key, fmt in _OUTCOME_ROWS:
        cells = [label, fmt(h[key]), fmt(b[key]), RATIO(_ratio(h[key], b[key]))]
        rows.append(cells + [fmt(o[v][key]) for v in extra])
    note = (
        f"Pooled over {h['tasks']} task-nights per variant (seeds {h['seeds']}); "
        "every variant ran the same tasks and seeds."
    )
    return [note, "", *_table(head, rows)]


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _night(n: dict[str, Any]) -> list[str]:
    measured = [
        "run",
        "wall",
        "÷ baseline",
        "critical path",
        "÷ critical path",
        "÷ max(critical path, work ÷ c)",
        "model ÷ wall",
    ]
    rows = [
        [
            f"{r['variant']} c={r['concurrency']}",
            SEC(r["wall_s"]),
            RATIO(r["wall_over_baseline"]),
            SEC(r["critical_path_s"]),
            RATIO(r["wall_over_critical_path"]),
            RATIO(r["wall_over_work_bound"]),
            RATIO(r["model_over_measured"]),
        ]
        for r in n["nights"]
    ]
    projected = [
        "run",
        "projected wall",
        "÷ baseline",
        "critical path",
        "÷ critical path",
        "÷ max(critical path, work ÷ c)",
    ]
    prows = [
        [
            f"{r['variant']} c={r['concurrency']}",
            _hours(r["projected_wall_s"]),
            RATIO(r["projected_over_baseline"]),
            _hours(r["projected_critical_path_s"]),
            RATIO(r["projected_wall_over_critical_path"]),
            RATIO(r["projected_wall_over_work_bound"]),
        ]
        for r in n["nights"]
    ]
    same = "yes" if n["same_outcomes_across_concurrency"] else "NO"
    scale = n["latency_scale"]
    return [
        f"Measured, simulated latency ÷{scale}:" if scale else "Measured, no latency:",
        "",
        *_table(measured, rows),
        f"Projected to real latency (×{scale}; list-scheduling model, no CPU contention):",
        "",
        *_table(projected, prows),
        f"Same per-task outcomes at every concurrency: {same}.",
        "",
    ]


def _hours(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds / 60:.1f} min" if seconds < 3600 else f"{seconds / 3600:.2f} h"


def _overhead(c: dict[str, Any]) -> list[str]:
    h, b, r = c["harness"], c["baseline"], c["ratios"]
    rows = [
        [
            "harness overhead per attempt (wall − provider − test runs)",
            SEC(h["overhead_per_attempt_s"]),
            SEC(b["overhead_per_attempt_s"]),
            RATIO(r["overhead_per_attempt_s"]),
        ],
        [
            "one test run (harness: sandbox; baseline: plain pytest)",
            SEC(h["test_run_s"]),
            SEC(b["test_run_s"]),
            RATIO(r["test_run_s"]),
        ],
        [
            "one provider call (scaled latency + simulator)",
            SEC(h["provider_per_call_s"]),
            SEC(b["provider_per_call_s"]),
            RATIO(_ratio(h["provider_per_call_s"], b["provider_per_call_s"])),
        ],
    ]
    return _table(["per attempt, concurrency 1", "harness", "baseline", "ratio"], rows)


def _big(g: dict[str, Any]) -> list[str]:
    runs, r = g["runs"], g["ratios"]
    rows = [
        [
            "validation time",
            SEC(runs["validate"]["seconds"]),
            SEC(runs["validate_plain"]["seconds"]),
            RATIO(r["validate_seconds"]),
        ],
        [
            "validation peak RSS",
            MIB(runs["validate"]["peak_rss_mib"]),
            MIB(runs["validate_plain"]["peak_rss_mib"]),
            RATIO(r["validate_peak_rss_mib"]),
        ],
        [
            "summary time (json + md + html, then print)",
            SEC(runs["summary"]["seconds"]),
            SEC(runs["summary_plain"]["seconds"]),
            RATIO(r["summary_seconds"]),
        ],
        [
            "summary peak RSS",
            MIB(runs["summary"]["peak_rss_mib"]),
            MIB(runs["summary_plain"]["peak_rss_mib"]),
            RATIO(r["summary_peak_rss_mib"]),
        ],
    ]
    head = [
        f"{g['tasks']}-task list",
        "harness",
        "plain script (yaml.safe_load / json.dump)",
        "ratio",
    ]
    return _table(head, rows)


def _cap(t: dict[str, Any]) -> list[str]:
    names = {"harness_c1": "harness c=1", "harness_c4": "harness c=4", "baseline": "baseline"}
    runs = [k for k in names if k in t]
    rows = [
        ["spent", *(USD(t[k]["spent_usd"]) for k in runs)],
        ["spent ÷ cap", *(RATIO(t[k]["spent_over_cap"]) for k in runs)],
        ["tasks passing", *(str(t[k]["passing"]) for k in runs)],
    ]
    return _table([f"cap ${t['cap_usd']:.2f}", *(names[k] for k in runs)], rows)


def _context(results: dict[str, Any]) -> str:
    m = results["machine"]
    code = m.get("code") or {}
    return (
        f"Commit {code.get('commit')} (+{code.get('modified_files')} modified files) · "
        f"{m['nproc']} cores · Python {m['python']} · sandbox {m['sandbox']} · load average "
        f"{m['load_average_at_start']} → {m.get('load_average_at_end')} · "
        f"{results['duration_s']:.0f} s in all{_cpu(m.get('cpu_s'))}"
    )


def _cpu(cpu: dict[str, float] | None) -> str:
    """CPU time beside the wall time: under load the wall time measures the machine."""
    if not cpu:
        return ""
    return f" · CPU {cpu['self']:.0f} s (+{cpu['children']:.0f} s in test processes)"


def render(results: dict[str, Any]) -> str:
    """Markdown: the run's context, one table per figure, then the invariants checked."""
    f = results["figures"]
    out = [
        _context(results),
        "",
        *render_policy(results),
        "### Outcomes and cost",
        "",
        *_outcomes(f["outcomes"]),
    ]
    if f.get("night"):
        out += ["### 24-task night: wall time", "", *_night(f["night"])]
        out += ["### Per attempt", "", *_overhead(f["night"]["overhead"])]
    if f.get("big_list"):
        out += [f"### {f['big_list']['tasks']}-task list", "", *_big(f["big_list"])]
    if f.get("tight_cap"):
        out += ["### Under a tight cap", "", *_cap(f["tight_cap"])]
    out += render_diet(f.get("diet"))
    out += render_context(f.get("context_tools"))
    out += render_runner(f)
    if f.get("judge"):
        out += [render_judge(f["judge"])]
    shown = {True: "ok", False: "FAILED", None: "not measured in this run"}
    checks = ", ".join(f"{k}: {shown[v]}" for k, v in results["checks"].items())
    return "\n".join([*out, f"Checks: {checks}.", ""])
