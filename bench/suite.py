"""The bench, stage by stage: tasks → timed nights → outcome nights → capped nights →
the 1,000-task list → the test runner's micro-benchmark → isolation modes side by side → the
JavaScript boundary against plain node --test →
figures and checks. Every
variant runs on the same tasks and seeds, in the same process, one after the other."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

from bench import biglist
from bench.baseline import LastAttempt
from bench.batch import BATCH_VARIANT, ROUNDS_VARIANT, batch_figures, rounds_figures
from bench.bench_isolation import measure_isolation
from bench.bench_jsboundary import measure_js_boundary
from bench.billing import Billing, night_rebilled
from bench.calibrate import calibrate
from bench.compare import checks, outcome_figures, timing_figures
from bench.context import context_ab
from bench.diet import diet_stage
from bench.fanout import fan_out
from bench.figures import ratio
from bench.judge import judge_stage
from bench.machine import cpu_seconds, describe, load_average, source_digest
from bench.model import Night
from bench.policies import NIGHT, POLICIES, SAME_BILLING, compare_pools, headline, policy_table
from bench.scale import measure as measure_scale
from bench.sensitivity import ranges, survivors, sweep
from bench.stages import REALISTIC, Settings, Stages
from bench.workspace import EXAMPLE, make_workspace
from harness.tasks import load_tasks

__all__ = ["REALISTIC", "Settings", "run_suite"]


def _timed(st: Stages) -> tuple[Night, list[Night]]:
    """The published loop (sequential) and this harness at each concurrency, with latency."""
    seed = st.s.seeds[0]
    base = st.baseline(seed, 1, timed=True)
    return base, [st.harness(seed, c, timed=True) for c in st.s.concurrencies]


def _outcome_plan(st: Stages, base: Night | None) -> list[tuple[str, Callable[[Stages], Night]]]:
    """The outcome nights in the record's order, each with its kind (which memo it uses)."""
    harness = partial(Stages.harness, c=4, timed=False)
    baseline = partial(Stages.baseline, workers=2, timed=False)
    plan: list[tuple[str, Callable[[Stages], Night]]] = []
    for seed in st.s.seeds:
        if seed != st.s.seeds[0] or base is None:
            plan.append(("harness", partial(harness, seed=seed)))
            plan.append(("baseline", partial(baseline, seed=seed)))
        if st.s.published_variants:
            plan.append(
                (
                    "baseline",
                    partial(baseline, seed=seed, keep=LastAttempt, variant="baseline_no_ratchet"),
                )
            )
            plan.append(
                (
                    "baseline",
                    partial(baseline, seed=seed, variant="baseline_full_output", full_output=True),
                )
            )
        # The loops alone (caching off, as in the published loop), the shipped loop with
        # whole-file fixes (what the edit format buys) and with its review on the cheapest
        # model the price table has always run.
        extra = [v for v in POLICIES if v != "harness"] if st.s.extra_variants else []
        core = ["harness_no_prompt_cache", "harness_whole_fixes", "harness_review_cheapest"]
        for variant in extra or core:
            plan.append(("harness", partial(harness, seed=seed, variant=variant)))
    return plan


def _outcomes(
    st: Stages, base: Night | None, harness_c1: Night | None, beside: Sequence[Callable] = ()
) -> tuple[list[Night], list[Any]]:
    """Every variant on every seed without latency (outcomes do not depend on it): the first
    seed reuses the timed nights, if any. Baseline tasks run two at a time here, a bench
    shortcut that cannot change outcomes (no latency, no binding cap: tasks are independent).
    This harness's nights and the published loop's share no remembered test results (one
    memo per runner), so each kind runs in its order in a process of its own
    (bench/fanout.py); `beside`: more jobs for the same pool, their results returned too."""
    plan = _outcome_plan(st, base)

    def kind(name: str, st: Stages) -> list[Night]:
        return [run(st) for k, run in plan if k == name]

    results = fan_out(st, [partial(kind, "harness"), partial(kind, "baseline"), *beside])
    ran = {"harness": iter(results[0]), "baseline": iter(results[1])}
    nights = [n for n in (base, harness_c1) if n is not None]
    return [*nights, *(next(ran[k]) for k, _ in plan)], results[2:]


def _capped(st: Stages, base: Night) -> tuple[dict[str, Any] | None, list[Night]]:
    """Both loops under a cap they cannot finish within: where does each stop?"""
    if st.s.tight_cap_fraction is None:
        return None, []
    cap = st.s.tight_cap_usd or round(base.spent_usd * st.s.tight_cap_fraction, 2)
    seed = st.s.seeds[0]
    nights = {
        "baseline": st.baseline(seed, 1, False, cap=cap),
        "harness_c1": st.harness(seed, 1, False, cap=cap),
        "harness_c4": st.harness(seed, 4, False, cap=cap),
    }
    out: dict[str, Any] = {"cap_usd": cap}
    for name, night in nights.items():
        out[name] = {
            "spent_usd": night.spent_usd,
            "spent_over_cap": ratio(night.spent_usd, cap),
            "passing": sum(t.passing for t in night.tasks),
            "stopped": night.stopped,
        }
    return out, list(nights.values())


def _big_list(st: Stages) -> dict[str, Any] | None:
    if not st.s.big_list:
        return None
    ws = make_workspace(st.timed_dir / "big", st.s.big_list)  # timed: on the disk
    runs = {mode: biglist.measure(mode, ws.tasks_yaml, st.s.big_list) for mode in biglist.MODES}
    st.note(f"{st.s.big_list}-task list measured")
    ratios = {
        f"{what}_{key}": ratio(runs[what][key], runs[f"{what}_plain"][key])
        for what in ("validate", "summary")
        for key in ("seconds", "peak_rss_mib")
    }
    return {"tasks": st.s.big_list, "runs": runs, "ratios": ratios}


def _sandbox_bench(st: Stages) -> dict[str, Any] | None:
    """The test runner's own micro-benchmark, run as its owner ships it; output kept verbatim."""
    script = Path(__file__).resolve().parent / "bench_sandbox.py"
    if not st.s.sandbox_bench or not script.is_file():
        return None
    proc = subprocess.run(
        [sys.executable, str(script), "--runs", "5", "--tests", "100"],  # the time limit
        capture_output=True,
        text=True,
        check=False,
        cwd=script.parent.parent,
    )
    st.note("bench_sandbox.py done")
    return {
        "command": "python bench/bench_sandbox.py --runs 5 --tests 100",
        "returncode": proc.returncode,
        "output": proc.stdout.strip() or proc.stderr.strip()[-2000:],
    }


def _isolation_bench(st: Stages) -> dict[str, Any] | None:
    """Boundary vs in_process vs plain pytest at 3, 27 and 100 tests, side by side in one
    stage (bench/bench_isolation.py): ratios with intervals, the issue's targets met or not."""
    if not st.s.isolation_rounds:
        return None
    return measure_isolation(st.s.isolation_rounds, st.workdir / "isolation", st.note)


def _js_boundary_bench(st: Stages) -> dict[str, Any] | None:
    """A JavaScript test run behind the boundary vs in process vs plain `node --test` on
    tasks/js_example (bench/bench_jsboundary.py), as many rounds as the isolation stage."""
    if not st.s.isolation_rounds or shutil.which("node") is None:
        return None
    return measure_js_boundary(st.s.isolation_rounds, st.workdir / "js_boundary", st.note)


def _unchanged(machine: dict[str, Any]) -> bool:
    code = machine["code"]
    return code["source_digest"] == code["source_digest_at_end"]


def _calibration(st: Stages) -> list[dict[str, Any]]:
    """The simulator against the public targets, on the example tasks, before any night."""
    if not st.s.calibration_seeds:
        return []
    rows = calibrate(load_tasks(EXAMPLE / "tasks.yaml"), seeds=st.s.calibration_seeds)
    st.note(f"calibration: {sum(r['within_tolerance'] for r in rows)}/{len(rows)} within tolerance")
    return rows


def _sensitivity(st: Stages) -> dict[str, Any] | None:
    """The sweep (bench/sensitivity.py) and its centre: the shipped model, same seeds."""
    if not st.s.sensitivity_seeds:
        return None
    specs = load_tasks(EXAMPLE / "tasks.yaml")
    center, rows = sweep(st, specs, st.s.sensitivity_calibration_seeds)
    return {
        "seeds": list(st.s.sensitivity_seeds),
        "prompt_cache": "on for the night (harness_night, priced from the shipped loop's"
        " nights); off on every side for the policies and loops_alone",
        "headline_variant": NIGHT,
        "center": center,
        "parameters": rows,
        "ranges": ranges(center, rows),
        "survivors": survivors(center, rows),
    }


def _derived(outcomes: Sequence[Night]) -> list[Night]:
    """The rows priced from recorded calls (bench/billing.py): the shipped loop's nights and
    the published loop's, each as a night in batch rounds with caching on."""
    night = Billing.night()
    out = []
    for n in outcomes:
        if n.variant == "harness":
            out.append(night_rebilled(n, night, NIGHT))
        elif n.variant == "baseline":
            out.append(night_rebilled(n, night, SAME_BILLING))
    return out


def _policy_nights(
    st: Stages,
) -> tuple[list[dict[str, Any]], list[Night], list[Night], dict[str, Any] | None]:
    """The calibration, the outcome nights (after the timed ones, unless policies only) and
    the night figures. The calibration is a function of the example tasks and seeds alone:
    with no timed night to disturb, it runs beside the outcome nights (bench/fanout.py)."""
    if st.s.policies_only:
        outcomes, [calibration] = _outcomes(st, None, None, beside=[_calibration])
        return calibration, outcomes, [], None
    calibration = _calibration(st)
    base, harness = _timed(st)
    night = timing_figures(base, harness, st.s.latency_scale)
    outcomes, _ = _outcomes(st, base, harness[0])
    return calibration, outcomes, harness[1:], night


def run_suite(
    settings: Settings, workdir: Path, quiet: bool = False, timed_dir: Path | None = None
) -> dict[str, Any]:
    """Run every stage and return the results document (JSON-ready); timed nights write
    into `timed_dir` (default: `workdir`)."""
    started = time.perf_counter()
    machine = describe()
    st = Stages(settings, workdir, quiet, timed_dir)
    calibration, outcomes, timed_rest, night = _policy_nights(st)
    base = next(n for n in outcomes if n.variant == "baseline")
    capped, capped_nights = (None, []) if settings.policies_only else _capped(st, base)
    policies = policy_table([*outcomes, *_derived(outcomes)])
    sensitivity = _sensitivity(st)
    batch_night = st.harness(st.s.seeds[-1], 4, False, BATCH_VARIANT)  # one real batch night
    rounds_night = st.harness(st.s.seeds[-1], 4, False, ROUNDS_VARIANT)  # one in rounds
    timed = not settings.policies_only
    figures: dict[str, Any] = {
        "batch": batch_figures(outcomes, batch_night, compare_pools),
        "rounds": rounds_figures([*outcomes, *capped_nights], rounds_night),
        "outcomes": outcome_figures(outcomes),
        "policies": policies,
        "night": night,
        "tight_cap": capped,
        "big_list": None if settings.policies_only else _big_list(st),
        "sandbox_bench": None if settings.policies_only else _sandbox_bench(st),
        "context_tools": context_ab(st),  # bench/context.py: tools off/on, lists with/without
        "isolation": None if settings.policies_only else _isolation_bench(st),
        "js_boundary": None if settings.policies_only else _js_boundary_bench(st),
        "scale": measure_scale(settings.tasks) if settings.scale and timed else None,
        "test_memo": {kind: memo.to_json() for kind, memo in st.memos.items()},
        "judge": judge_stage(),  # the principle judge on its labelled set (bench/judge.py)
        "diet": diet_stage(st, [n for n in outcomes if n.variant == "harness"]),
        "nights_reused": st.nights_reused,
    }
    nights = [*outcomes, *timed_rest, *capped_nights, batch_night, rounds_night]
    machine["load_average_at_end"] = load_average()
    machine["cpu_s"] = cpu_seconds()
    machine["code"]["source_digest_at_end"] = source_digest()
    same = night["same_outcomes_across_concurrency"] if night else None
    fitted = [r for r in calibration if r["kind"] == "fitted"]
    return {
        "schema": 3,
        "machine": machine,
        "settings": {**asdict(settings), "realistic_latency": asdict(REALISTIC)},
        "duration_s": time.perf_counter() - started,
        "headline": headline(policies, capped, same, sensitivity),
        "calibration": calibration,
        "sensitivity": sensitivity,
        "figures": figures,
        "checks": {
            **checks(figures, nights),
            "fitted_calibration_within_tolerance": all(r["within_tolerance"] for r in fitted),
            "code_unchanged_during_run": _unchanged(machine),
            "remembered_results_match_fresh_runs": not any(m.mismatches for m in st.memos.values()),
        },
        "nights": [n.to_json() for n in nights],
    }
