"""Prometheus textfile metrics for node_exporter, from the summary.json document.

Gauges describe the last run; the *_total counters count over every run the store has seen
(`Store.totals()`), so `increase(harness_reverts_total[1d])` means what it says. Without a
store the counters cover this run only and restart with every run, which Prometheus reads
as a counter reset.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.results import JudgeOutcome, ReviewOutcome, RunStatus, TaskStatus, Totals

__all__ = ["render_metrics", "write_metrics"]


def _totals_from(summary: Mapping[str, Any]) -> Totals:
    attempts = [a for t in summary["tasks"] for a in t["attempts"]]
    calls = summary.get("calls") or {}
    return Totals(
        runs={summary["status"]: 1},
        calls=calls.get("count"),
        retries=calls.get("retries"),
        extraction_failures=sum(1 for a in attempts if a.get("extraction_error")),
        reverts=sum(1 for a in attempts if a.get("regressed")),
        judge=dict(Counter(t["judge"] for t in summary["tasks"] if t.get("judge"))),
    )


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items()) + "}"


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def _family(
    name: str, kind: str, text: str, samples: Iterable[tuple[Mapping[str, str], float]]
) -> list[str]:
    lines = [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
    return lines + [f"{name}{_labels(labels)} {_number(value)}" for labels, value in samples]


def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


def _gauges(summary: Mapping[str, Any], base: dict[str, str]) -> list[str]:
    tasks = summary["tasks"]
    budget = summary["budget"]
    by_status = [
        ({**base, "status": s.value}, sum(t["status"] == s for t in tasks)) for s in TaskStatus
    ]
    last = [({**base, "status": s.value}, int(summary["status"] == s)) for s in RunStatus]
    out = _family("harness_tasks", "gauge", "Tasks of the last run by status.", by_status)
    out += _family("harness_last_run_status", "gauge", "1 for the last run's status.", last)
    out += _family(
        "harness_spend_usd",
        "gauge",
        "USD spent by the last run.",
        [(base, float(budget["spent_usd"]))],
    )
    if budget.get("cap_usd") is not None:
        out += _family(
            "harness_budget_cap_usd",
            "gauge",
            "The last run's budget cap in USD.",
            [(base, float(budget["cap_usd"]))],
        )
    unparsed = sum(
        a.get("review") == ReviewOutcome.UNPARSEABLE for t in tasks for a in t["attempts"]
    )
    out += _family(
        "harness_reviews_unparseable",
        "gauge",
        "Reviews of the last run that were neither CLEAN nor a list (counted as clean).",
        [(base, unparsed)],
    )
    out += _batch(summary.get("batch"), base)
    duration = _epoch(summary["finished_at"]) - _epoch(summary["started_at"])
    out += _family(
        "harness_run_duration_seconds", "gauge", "Wall time of the last run.", [(base, duration)]
    )
    out += _family(
        "harness_last_run_timestamp_seconds",
        "gauge",
        "Unix time the last run finished.",
        [(base, _epoch(summary["finished_at"]))],
    )
    return out


_BATCH_COUNTS = ("submitted", "succeeded", "errored", "expired", "canceled", "fell_back")


def _batch(batch: Mapping[str, Any] | None, base: dict[str, str]) -> list[str]:
    """Batch mode's entries of the last run by what became of them, and what it saved."""
    if not batch:
        return []
    counts = [({**base, "kind": k}, batch[k]) for k in _BATCH_COUNTS]
    out = _family(
        "harness_batch_entries", "gauge", "Batch entries of the last run by kind.", counts
    )
    out += _family(
        "harness_batch_saved_usd",
        "gauge",
        "USD the last run's batched writes saved against the list price.",
        [(base, float(batch["saved_usd"]))],
    )
    return out


def _counters(totals: Totals, base: dict[str, str]) -> list[str]:
    runs = [({**base, "status": s}, n) for s, n in sorted(totals.runs.items())]
    out = _family("harness_runs_total", "counter", "Runs by final status.", runs)
    for name, value, text in (
        ("harness_calls_total", totals.calls, "Paid LLM calls."),
        ("harness_retries_total", totals.retries, "Transport retries inside paid calls."),
        (
            "harness_extraction_failures_total",
            totals.extraction_failures,
            "Attempts whose reply held no usable code.",
        ),
        ("harness_reverts_total", totals.reverts, "Attempts that regressed and were reverted."),
    ):
        if value is not None:
            out += _family(name, "counter", text, [(base, value)])
    if totals.judge:  # only once a judge (loop.judge) has run
        judged = [({**base, "outcome": o}, totals.judge.get(o, 0)) for o in JudgeOutcome]
        out += _family(
            "harness_judge_outcome_total", "counter", "Tasks by principle-judge outcome.", judged
        )
    return out


def render_metrics(
    summary: Mapping[str, Any],
    totals: Totals | None = None,
    labels: Mapping[str, str] | None = None,
) -> str:
    """The textfile exposition of one summary.json document (schema 1).

    `totals` comes from `Store.totals()`; without it the counters cover this run alone.
    `labels` are added to every sample (e.g. {"tasklist": "billing"}) so several task lists
    can share one node_exporter without clashing series.
    """
    base = dict(labels or {})
    lines = _gauges(summary, base) + _counters(totals or _totals_from(summary), base)
    return "\n".join(lines) + "\n"


def write_metrics(path: Path, text: str) -> None:
    """Write atomically: a synced temp file in the same folder (its name does not end in
    .prom, so the collector skips it), made world-readable because node_exporter usually
    runs as another user, then renamed over `path`. Its folder exists (start-up checks it);
    none is ever made."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), 0o644)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
