"""The committed bench run (bench/results/latest.json) is the one docs/benchmarks.md quotes:
these tests read that record and fail when a record that breaks the published promises (the
published loop as the baseline, a labelled and calibrated simulator, the sensitivity sweep,
the invariants) or a page out of step with it is committed. They time nothing themselves.
Run by `make bench-check`, not by `make test`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.policies import POLICIES  # noqa: E402

RESULTS = ROOT / "bench" / "results"
MODEL = ROOT / "harness" / "data" / "sim_model.yaml"
BILLING = ROOT / "bench" / "billing.yaml"


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    return json.loads((RESULTS / "latest.json").read_text())


def test_calibration_rows_carry_protocol_and_kind(run: dict[str, Any]) -> None:
    """Every calibration row names its source, its protocol and whether it was fitted or
    predicted; every fitted row was met; predicted rows carry their error, met or not."""
    rows = run["calibration"]

    assert rows, "the committed run compared policies without calibrating the simulator"
    for row in rows:
        assert {"target", "source", "protocol", "kind", "expected", "measured", "error"} <= set(row)
        assert row["source"].strip() and row["kind"] in {"fitted", "predicted"}, row["target"]
        assert row["kind"] == "predicted" or row["within_tolerance"] is True, row["target"]
    assert {"fitted", "predicted"} <= {row["kind"] for row in rows}


def test_policy_table_has_both_published_loops(run: dict[str, Any]) -> None:
    """Every policy the bench defines has a row (the core ones with --core-variants), beside
    the published loop as published (`baseline`, filtered fix prompt), each with a
    pass-rate and a cost-ratio interval, low end first."""
    policies = run["figures"]["policies"]["policies"]

    core = {"harness", "harness_no_prompt_cache", "harness_whole_fixes", "baseline"}
    every = {*POLICIES, "baseline", "baseline_full_output", "baseline_no_ratchet"}
    assert (every if run["settings"]["extra_variants"] else core) <= set(policies)
    for name, row in policies.items():
        for key in ("pass_rate_interval", "cost_per_pass_ratio_interval"):
            low, high = row[key]
            assert low <= high, (name, key)


def test_sensitivity_sweeps_every_assumed_parameter_with_a_range(run: dict[str, Any]) -> None:
    """Each parameter labelled with a low/high range in sim_model.yaml or bench/billing.yaml
    has a row with the headline at both ends; every `assumed` parameter has a range."""
    labels = yaml.safe_load(MODEL.read_text())["labels"]
    billing = yaml.safe_load(BILLING.read_text())
    swept = {name for name, label in labels.items() if "range" in label}
    swept |= {f"billing.{name}" for name, label in billing.items() if "range" in label}
    rows = {row["parameter"]: row for row in run["sensitivity"]["parameters"]}

    assert set(rows) == swept
    for row in rows.values():
        for end in ("low", "high"):
            assert row[end]["cost_per_pass_ratio"] is not None, (row["parameter"], end)
            assert row[end]["pass_rate_ratio"] is not None, (row["parameter"], end)
    unswept = [
        n for n, label in billing.items() if label["label"] == "assumed" and "range" not in label
    ]
    assert unswept == []


def test_a_predicted_row_that_misses_names_a_swept_parameter(run: dict[str, Any]) -> None:
    """Every predicted calibration row outside its tolerance names the parameters that
    would move it, and each of them is swept."""
    labels = yaml.safe_load(MODEL.read_text())["labels"]
    missed = [r for r in run["calibration"] if not r["within_tolerance"]]

    for row in missed:
        assert row.get("moved_by"), row["target"]
        assert all("range" in labels[name] for name in row["moved_by"]), row["target"]


def test_the_headline_meets_its_promise_at_the_right_sample(run: dict[str, Any]) -> None:
    """At least 96 task-nights per policy; the shipped night costs at most 0.5x the
    published loop per passing task at the centre and at most 0.65x anywhere in the sweep,
    at a pass rate at least 0.97x; the published loop given the same billing beside it."""
    h = run["headline"]
    rows = run["figures"]["policies"]["policies"]

    assert min(row["task_nights"] for row in rows.values()) >= 96
    assert h["task_nights"] >= 96
    assert h["cost_per_pass_ratio"] <= 0.5
    assert h["cost_per_pass_ratio_range"][1] <= 0.65
    assert h["pass_rate_ratio"] >= 0.97
    assert h["same_billing"]["its_cost_per_pass_ratio"] is not None
    assert "baseline_same_billing" in rows and "harness_night" in rows


def test_headline_is_a_range_over_the_sweep(run: dict[str, Any]) -> None:
    """The headline keeps its keys and gains the ranges; each range holds the point figure."""
    h = run["headline"]
    keys = {
        "cost_per_pass_ratio",
        "cost_per_pass_ratio_interval",
        "pass_rate_ratio",
        "pass_rate_ratio_interval",
        "same_outcomes_at_every_concurrency",
        "meets_target",
        "cost_per_pass_ratio_range",
        "pass_rate_ratio_range",
    }

    assert keys <= set(h)
    for key in ("cost_per_pass_ratio", "pass_rate_ratio"):
        low, high = h[f"{key}_range"]
        assert low <= round(h[key], 4) <= high, key


def test_the_recorded_run_is_unmodified_and_every_check_holds(run: dict[str, Any]) -> None:
    """A 2-core machine, unmodified sources, every invariant that was measured ok, at the
    record's sample (its time is recorded: docs/benchmarks.md, Run time)."""
    settings = run["settings"]

    assert run["machine"]["nproc"] == 2
    assert run["machine"]["code"]["modified_files"] == 0
    assert run["duration_s"] > 0 and settings["tasks"] * len(settings["seeds"]) >= 96
    assert all(v is not False for v in run["checks"].values()), [
        k for k, ok in run["checks"].items() if ok is False
    ]


def test_docs_embed_the_committed_tables_verbatim() -> None:
    """docs/benchmarks.md shows the tables of the committed run, not an older one."""
    tables = (RESULTS / "latest.md").read_text().strip()
    page = (ROOT / "docs" / "benchmarks.md").read_text()

    assert tables in page
