"""The committed bench run (bench/results/latest.json) is the one docs/benchmarks.md quotes:
these tests read that record and fail when a re-run that breaks the published promise (the
calibration, the headline target, the tight-cap night, the ten minutes, an invariant) or a
page out of step with it is committed. They time nothing themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.policies import POLICIES

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    return json.loads((RESULTS / "latest.json").read_text())


def test_calibration_table_is_complete_and_within_tolerance(run: dict[str, Any]) -> None:
    """Every calibration target names its source and was reproduced within tolerance."""
    rows = run["calibration"]

    assert rows, "the committed run compared policies without calibrating the simulator"
    for row in rows:
        assert {"target", "source", "expected", "measured", "within_tolerance"} <= set(row)
        assert row["source"].strip() and row["within_tolerance"] is True, row["target"]


def test_policy_table_carries_intervals_for_every_policy(run: dict[str, Any]) -> None:
    """Every policy the bench defines has a row (a stale record fails), each with a pass-rate
    and a cost-ratio interval, low end first."""
    policies = run["figures"]["policies"]["policies"]

    assert {*POLICIES, "baseline", "baseline_no_ratchet"} <= set(policies)
    for name, row in policies.items():
        for key in ("pass_rate_interval", "cost_per_pass_ratio_interval"):
            low, high = row[key]
            assert low <= high, (name, key)


def test_headline_meets_the_target_against_the_published_loop(run: dict[str, Any]) -> None:
    """Shipped default ÷ published loop: cost per pass ≤ 0.6× at a pass rate no lower (the
    interval reaches 1 or above), outcomes the same at every concurrency, and the $0.95 night
    passes at least as many tasks."""
    h = run["headline"]

    assert h["cost_per_pass_ratio"] <= 0.6
    assert h["pass_rate_ratio_interval"][1] >= 1.0 and h["meets_target"] is True
    assert h["same_outcomes_at_every_concurrency"] is True
    assert run["settings"]["concurrencies"][0] == 1 and 8 in run["settings"]["concurrencies"]
    assert h["tight_cap"]["cap_usd"] == 0.95
    assert h["tight_cap"]["harness_passing"] >= h["tight_cap"]["baseline_passing"]


def test_the_recorded_run_is_a_full_make_bench_within_ten_minutes(run: dict[str, Any]) -> None:
    """The defaults of `make bench` on a 2-core machine, unmodified sources, every check ok."""
    assert run["settings"]["tasks"] == 24 and len(run["settings"]["seeds"]) >= 2
    assert run["machine"]["nproc"] == 2
    assert run["machine"]["code"]["modified_files"] == 0
    assert run["duration_s"] < 600
    assert all(run["checks"].values()), [k for k, ok in run["checks"].items() if not ok]


def test_docs_embed_the_committed_tables_verbatim() -> None:
    """docs/benchmarks.md shows the tables of the committed run, not an older one."""
    tables = (RESULTS / "latest.md").read_text().strip()
    page = (ROOT / "docs" / "benchmarks.md").read_text()

    assert tables in page
