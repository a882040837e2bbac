"""Prometheus textfile metrics: valid exposition format, the right numbers, atomic writes."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from harness.report import RunSummary, render_metrics, write_metrics
from harness.results import (
    AttemptRecord,
    BatchReport,
    ReviewOutcome,
    RunStatus,
    TaskBatch,
    TaskResult,
    TaskStatus,
    Totals,
)

START = dt.datetime(2026, 5, 12, 2, 15, tzinfo=dt.UTC)

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = rf'{_NAME[:-1]}*="(?:[^"\\\n]|\\[\\"n])*"'
_SAMPLE = re.compile(rf"^({_NAME})(\{{(?:{_LABEL}(?:,{_LABEL})*)?\}})? (\S+)$")
_LABEL_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """A strict reader of the text format: HELP and TYPE before each family's samples, one
    family per name, valid names, labels and floats, no duplicate series, final newline."""
    assert text.endswith("\n")
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    typed: dict[str, str] = {}
    helped: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in helped, f"second HELP for {name}"
            helped.add(name)
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert kind in ("counter", "gauge") and name not in typed and name in helped
            typed[name] = kind
        else:
            match = _SAMPLE.match(line)
            assert match, f"not a sample line: {line!r}"
            name, labels, value = match.groups()
            assert name in typed, f"{name} has no TYPE before its samples"
            key = (name, tuple(sorted(_LABEL_PAIR.findall(labels or ""))))
            assert key not in samples, f"duplicate series {key}"
            samples[key] = float(value)
    return samples


def summary(**extra: Any) -> dict[str, Any]:
    orders = TaskResult(
        "orders",
        TaskStatus.PARTIAL,
        "3 attempts used",
        2,
        passed=12,
        failed=5,
        errors=0,
        total=17,
        cost_usd=Decimal("0.51"),
        output=None,
        attempts=(
            AttemptRecord(1, "write", extraction_error="no code", review=ReviewOutcome.UNPARSEABLE),
            AttemptRecord(2, "fix", passed=12, failed=5, errors=0, total=17),
            AttemptRecord(3, "fix", passed=10, failed=7, errors=0, total=17, regressed=True),
        ),
    )
    users = TaskResult("users", TaskStatus.PASSED, "", 1, passed=9, failed=0, errors=0, total=9)
    data = RunSummary(
        "r1",
        START,
        START + dt.timedelta(minutes=61, seconds=5),
        RunStatus.COMPLETED,
        "sim",
        Decimal(30),
        Decimal("0.51"),
        (orders, users),
    ).to_json()
    return data | extra


def test_gauges_describe_the_last_run() -> None:
    """Tasks by status, spend, cap, duration and finish time of the run in the summary."""
    samples = parse(render_metrics(summary()))

    assert (
        1.0,
        1.0,
        0.0,
        0.51,
        30.0,
        3665.0,
        (START + dt.timedelta(seconds=3665)).timestamp(),
        1.0,
    ) == (
        samples[("harness_tasks", (("status", "passed"),))],
        samples[("harness_tasks", (("status", "partial"),))],
        samples[("harness_tasks", (("status", "skipped"),))],
        samples[("harness_spend_usd", ())],
        samples[("harness_budget_cap_usd", ())],
        samples[("harness_run_duration_seconds", ())],
        samples[("harness_last_run_timestamp_seconds", ())],
        samples[("harness_last_run_status", (("status", "completed"),))],
    )
    assert samples[("harness_reviews_unparseable", ())] == 1.0


def test_counters_come_from_the_store_totals() -> None:
    """With store totals, the *_total counters count over every run."""
    totals = Totals(
        {"completed": 5, "budget_stopped": 1},
        calls=120,
        retries=7,
        extraction_failures=4,
        reverts=9,
    )
    samples = parse(render_metrics(summary(), totals))

    assert (
        samples[("harness_runs_total", (("status", "completed"),))],
        samples[("harness_runs_total", (("status", "budget_stopped"),))],
        samples[("harness_calls_total", ())],
        samples[("harness_retries_total", ())],
        samples[("harness_extraction_failures_total", ())],
        samples[("harness_reverts_total", ())],
    ) == (5.0, 1.0, 120.0, 7.0, 4.0, 9.0)


def test_without_a_store_counters_cover_this_run_and_unknowns_are_left_out() -> None:
    """No totals: counts from the summary's attempts; calls and retries only if it has them."""
    bare = parse(render_metrics(summary()))
    with_calls = parse(render_metrics(summary(calls={"count": 6, "retries": 2})))

    assert (
        bare[("harness_runs_total", (("status", "completed"),))],
        bare[("harness_extraction_failures_total", ())],
        bare[("harness_reverts_total", ())],
        any(name == "harness_calls_total" for name, _ in bare),
        with_calls[("harness_calls_total", ())],
        with_calls[("harness_retries_total", ())],
    ) == (1.0, 1.0, 1.0, False, 6.0, 2.0)


def test_no_cap_means_no_cap_series() -> None:
    """A run without a budget cap exposes no cap rather than a fake zero."""
    data = summary()
    data["budget"]["cap_usd"] = None

    assert not any(name == "harness_budget_cap_usd" for name, _ in parse(render_metrics(data)))


def test_extra_labels_are_escaped_on_every_sample() -> None:
    """Operator labels go on every series, with quotes, backslashes and newlines escaped."""
    text = render_metrics(summary(), labels={"tasklist": 'bill"ing\\x\nnight'})
    samples = parse(text)

    assert (True, 'tasklist="bill\\"ing\\\\x\\nnight"' in text) == (
        all(dict(labels).get("tasklist") for _, labels in samples),
        True,
    )


@pytest.mark.parametrize("mode", [0o022, 0o077])
def test_write_metrics_is_atomic_and_readable_by_the_collector(tmp_path: Path, mode: int) -> None:
    """The .prom file appears whole, world-readable, with no temp file left behind."""
    import os

    old = os.umask(mode)
    try:
        write_metrics(tmp_path / "harness.prom", "a 1\n")
        write_metrics(tmp_path / "harness.prom", "a 2\n")
    finally:
        os.umask(old)

    assert (
        (tmp_path / "harness.prom").read_text(),
        (tmp_path / "harness.prom").stat().st_mode & 0o777,
        [p.name for p in tmp_path.iterdir()],
    ) == ("a 2\n", 0o644, ["harness.prom"])


def test_batch_entries_and_saving_are_gauges_of_the_last_run() -> None:
    """Batch mode's entries by kind and its saving show up; a night without batches has none."""
    report = BatchReport(
        submitted=5,
        succeeded=3,
        errored=1,
        canceled=1,
        fell_back=2,
        list_usd=Decimal("0.40"),
        cost_usd=Decimal("0.20"),
        tasks={"orders": TaskBatch("succeeded", 61.5)},
    )
    data = summary(batch=report.to_json())

    samples = parse(render_metrics(data))

    kinds = ("submitted", "succeeded", "errored", "expired", "canceled", "fell_back")
    assert [samples[("harness_batch_entries", (("kind", k),))] for k in kinds] == [
        5.0,
        3.0,
        1.0,
        0.0,
        1.0,
        2.0,
    ]
    assert samples[("harness_batch_saved_usd", ())] == 0.2
    assert not any(name.startswith("harness_batch") for name, _ in parse(render_metrics(summary())))
