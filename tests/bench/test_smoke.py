"""One tiny bench case (2 tasks, 1 seed, 2 attempts, no latency): structure and invariants.

No timing assertions: the figures are measured, never checked against thresholds.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.render import render  # noqa: E402
from bench.suite import Settings, run_suite  # noqa: E402

pytestmark = pytest.mark.slow

TINY = Settings(
    tasks=2,
    seeds=(0,),
    concurrencies=(1,),
    latency_scale=None,
    big_list=0,
    tight_cap_fraction=None,
    extra_variants=False,
    max_attempts=2,
    sandbox_bench=False,
    isolation_rounds=0,
    scale=False,
    calibration_seeds=0,  # tests/bench/test_calibrate.py covers it
    sensitivity_seeds=(),  # the sweep reruns these nights per parameter end
)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The tiny bench, run once for every test in this module; logging reset afterwards."""
    yield run_suite(TINY, tmp_path_factory.mktemp("bench"), quiet=True)
    structlog.reset_defaults()


def _numbers(value: Any) -> Iterator[float]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, float | int) and not isinstance(value, bool):
        yield float(value)


def test_every_variant_ran_every_task(results: dict[str, Any]) -> None:
    """The harness, the baseline and the no-ratchet variant each ran both tasks, same seed."""
    outcomes = results["figures"]["outcomes"]

    assert {"harness", "baseline", "baseline_no_ratchet"} <= set(outcomes)
    assert all(
        outcomes[v]["tasks"] == 2 and outcomes[v]["seeds"] == [0]
        for v in ("harness", "baseline", "baseline_no_ratchet")
    )


def test_ratios_are_finite_or_explicitly_undefined(results: dict[str, Any]) -> None:
    """Every figure is a finite number; an undefined ratio (0/0) is null, never inf or nan."""
    numbers = list(_numbers(results["figures"]))

    assert numbers and all(math.isfinite(n) for n in numbers)


def test_every_invariant_check_holds(results: dict[str, Any]) -> None:
    """No harness task faulted, ratchets held, shipped files are attempts, caps were kept.
    (Whether someone edited the sources during the run is the machine's business, not this
    test's: that check is left out.)"""
    checks = {k: v for k, v in results["checks"].items() if k != "code_unchanged_during_run"}

    failed = [name for name, ok in checks.items() if ok is False]

    assert failed == []


def test_ratchet_never_ships_worse_than_best(results: dict[str, Any]) -> None:
    """With the ratchet (harness and published loop) the shipped file is the best attempt."""
    ratcheted = [n for n in results["nights"] if n["variant"] != "baseline_no_ratchet"]

    assert results["checks"]["ratchet_never_ships_worse"]
    assert all(t["shipped_passed"] == t["best_passed"] for n in ratcheted for t in n["tasks"])


def test_baseline_bills_no_cache_and_harness_reads_it(results: dict[str, Any]) -> None:
    """The published loop resends everything uncached; the harness reads its stable prefix."""
    outcomes = results["figures"]["outcomes"]

    assert outcomes["baseline"]["tokens"]["cache_read"] == 0
    assert outcomes["baseline"]["tokens"]["cache_write"] == 0
    assert outcomes["harness"]["tokens"]["cache_read"] > 0


def test_results_render_as_markdown_tables(results: dict[str, Any]) -> None:
    """The rendered report has the outcome, night and per-attempt tables and the checks."""
    text = render(results)

    assert "### Outcomes and cost" in text and "### Per attempt" in text
    assert "harness ÷ baseline" in text and "Checks:" in text


def test_headline_compares_shipped_default_with_published_loop(results: dict[str, Any]) -> None:
    """The headline carries both ratios with intervals, from the policy table's row of the
    shipped loop priced as a night in rounds, beside the published loop given the same
    billing and the loops alone (caching to neither side)."""
    policies = results["figures"]["policies"]["policies"]
    headline, row = results["headline"], policies["harness_night"]

    assert headline["cost_per_pass_ratio"] == row["cost_per_pass_ratio"]
    assert headline["pass_rate_ratio"] == row["pass_rate_ratio"]
    alone = policies["harness_no_prompt_cache"]["cost_per_pass_ratio"]
    assert headline["loops_alone"]["cost_per_pass_ratio"] == alone
    assert (
        headline["same_billing"]["its_cost_per_pass_ratio"]
        == (policies["baseline_same_billing"]["cost_per_pass_ratio"])
    )
    assert headline["cost_per_pass_ratio"] < alone  # batch rounds and caching only cut cost
    assert {"baseline", "baseline_full_output", "harness"} <= set(policies)
    assert results["calibration"] == []


def test_batch_mode_on_and_off_are_reported_side_by_side(results: dict[str, Any]) -> None:
    """Cost per passing task with batch mode on costs less than off on the same task-nights,
    and the repricing matches a real batch night to the micro-dollar."""
    batch = results["figures"]["batch"]
    real = batch["real_batch_night"]

    assert batch["on_vs_off"]["cost_usd"] < batch["off"]["cost_usd"]
    assert abs(real["spent_usd"] - real["repriced_twin_usd"]) < 1e-6 and real["same_outcomes"]
    assert "### Batch mode on vs off" in render(results)


def test_untimed_nights_reuse_results_the_run_measured(results: dict[str, Any]) -> None:
    """The no-ratchet night starts from the same seeded writes as the timed published loop:
    it finds their results remembered, and the ones checked against a fresh run agreed."""
    memo = results["figures"]["test_memo"]

    assert memo["baseline"]["hits"] > 0 and memo["baseline"]["mismatches"] == []
    assert results["checks"]["remembered_results_match_fresh_runs"]


def test_context_tools_are_compared_off_and_on_with_and_without_the_blocks(
    results: dict[str, Any],
) -> None:
    """Four context nights: with the blocks listed the simulator never asks; without them and
    tools on it asks; the table carries the by-construction note."""
    figure = results["figures"]["context_tools"]
    rows = figure["variants"]

    assert sorted(rows) == [f"context_{w}_{t}" for w in ("bare", "full") for t in ("off", "on")]
    assert rows["context_full_on"]["tool_requests_per_task"] == 0
    assert rows["context_bare_off"]["tool_requests_per_task"] == 0
    assert rows["context_bare_on"]["tool_requests_per_task"] > 0
    assert "by construction" in render(results)
