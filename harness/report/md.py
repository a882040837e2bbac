"""The morning summary: summary.json (schema 1, the contract) and summary.md for a terminal."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.fsio import write_atomic
from harness.report import facts
from harness.report.schema import SCHEMA, SummaryError, read_summary
from harness.results import BatchReport, RunStatus, TaskResult, money, usd

__all__ = ["RunSummary", "SummaryError", "load_summary", "render_markdown", "write_summary"]


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    started_at: dt.datetime
    finished_at: dt.datetime
    status: RunStatus
    provider: str
    cap_usd: Decimal | None
    spent_usd: Decimal
    tasks: tuple[TaskResult, ...]
    notes: tuple[str, ...] = field(default=())  # run-level warnings (e.g. no sandbox)
    batch: BatchReport | None = None  # batch mode: entries, saving, each task's entry

    def _task_json(self, task: TaskResult) -> dict[str, Any]:
        data = task.to_json()
        entry = self.batch.tasks.get(task.id) if self.batch is not None else None
        if entry is not None:  # an optional field: schema 1 readers ignore it
            data["batch"] = entry.to_json()
        return data

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "run_id": self.run_id,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat(),
            "status": self.status.value,
            "provider": self.provider,
            "budget": {
                "cap_usd": usd(self.cap_usd) if self.cap_usd is not None else None,
                "spent_usd": usd(self.spent_usd),
            },
            "notes": list(self.notes),
            "tasks": [self._task_json(t) for t in self.tasks],
            **({"batch": self.batch.to_json()} if self.batch is not None else {}),
        }


def load_summary(run: Path) -> dict[str, Any]:
    """The run's summary.json, checked against schema 1 (SummaryError if it is damaged)."""
    return read_summary(Path(run) / "summary.json")


def write_summary(run: Path, summary: RunSummary) -> dict[str, Any]:
    """Write summary.json, summary.md and summary.html atomically; returns the JSON document."""
    from harness.report.page import render_html

    data = summary.to_json()
    write_atomic(Path(run) / "summary.md", render_markdown(data))
    write_atomic(Path(run) / "summary.html", render_html(data))
    write_atomic(Path(run) / "summary.json", json.dumps(data, indent=2) + "\n")
    return data


def render_markdown(data: dict[str, Any]) -> str:
    """Totals first, then what needs a human, then the per-task table."""
    tasks = data["tasks"]
    budget = data["budget"]
    cap = money(budget["cap_usd"]) if budget["cap_usd"] is not None else "no cap"
    out = [
        f"# Run {data['run_id']} — {data['status']}",
        "",
        f"**{facts.status_counts(tasks)}** of {len(tasks)} tasks · spent "
        f"{money(budget['spent_usd'])} of {cap} · {facts.duration(data)} · provider "
        f"{data['provider']}  ",
        facts.activity(tasks),
        *([f"{words}  "] if (words := facts.batch_words(data.get("batch"))) else []),
        "",
    ]
    attention = [
        f"- {task_id}: {text}" if task_id else f"- {text}"
        for _kind, task_id, text in facts.attention(data)
    ]
    out += ["## Needs a human", "", *(attention or ["- nothing"]), ""]
    out += [
        "## Tasks",
        "",
        "| task | status | best | passed | cost | attempts (n:passed/total tier cost) | reason |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in tasks:
        up = facts.escalated(t["attempts"])
        trail = " · ".join(facts.attempt_cell(a, up) for a in t["attempts"]) or "—"
        reason = " · ".join(r for r in (facts.seed_words(t), t["reason"]) if r)
        out.append(
            f"| {t['id']} | {t['status']} | {facts.best_cell(t)} | {facts.passed_cell(t)} "
            f"| {money(t['cost_usd'])} | {trail} | {reason} |"
        )
    return "\n".join(out) + "\n"
