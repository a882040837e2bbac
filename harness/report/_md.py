"""The morning summary: summary.json (schema 1, the contract) and summary.md for a terminal."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.fsio import write_atomic
from harness.results import RunStatus, TaskResult, TaskStatus, usd

__all__ = ["RunSummary", "load_summary", "render_markdown", "write_summary"]

SCHEMA = 1


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
            "tasks": [t.to_json() for t in self.tasks],
        }


def load_summary(run: Path) -> dict[str, Any]:
    return json.loads((Path(run) / "summary.json").read_text())


def write_summary(run: Path, summary: RunSummary) -> dict[str, Any]:
    """Write summary.json, summary.md and summary.html atomically; returns the JSON document."""
    from harness.report._html import render_html

    data = summary.to_json()
    write_atomic(Path(run) / "summary.md", render_markdown(data))
    write_atomic(Path(run) / "summary.html", render_html(data))
    write_atomic(Path(run) / "summary.json", json.dumps(data, indent=2) + "\n")
    return data


def _duration(data: dict[str, Any]) -> str:
    start = dt.datetime.fromisoformat(data["started_at"])
    end = dt.datetime.fromisoformat(data["finished_at"])
    seconds = int((end - start).total_seconds())
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m{seconds % 60:02d}s"


def _needs_attention(tasks: list[dict[str, Any]]) -> list[str]:
    lines = []
    for t in tasks:
        tid = t["id"]
        reverted = [a["n"] for a in t["attempts"] if a["regressed"]]
        if reverted:
            lines.append(
                f"- {tid}: regression reverted at attempt(s) {', '.join(map(str, reverted))}"
            )
        if t["status"] in (TaskStatus.GUARDRAIL, TaskStatus.ERROR):
            lines.append(f"- {tid}: {t['status']}: {t['reason']}")
        elif t["status"] == TaskStatus.SKIPPED and t["reason"].startswith("budget"):
            lines.append(f"- {tid}: skipped: {t['reason']}")
        tampered = [a["n"] for a in t["attempts"] if a.get("tampered")]
        if tampered:
            lines.append(f"- {tid}: {tampering_note(t)}")
        for warning in t.get("warnings", []):
            lines.append(f"- {tid}: warning: {warning}")
    return lines


def render_markdown(data: dict[str, Any]) -> str:
    """Totals first, then what needs a human, then the per-task table."""
    tasks = data["tasks"]
    counts = Counter(t["status"] for t in tasks)
    budget = data["budget"]
    cap = f"${budget['cap_usd']:.2f}" if budget["cap_usd"] is not None else "no cap"
    out = [
        f"# Run {data['run_id']} — {data['status']}",
        "",
        f"**{counts['passed']} passed, {counts['partial']} partial, {counts['failed']} failed"
        + "".join(f", {counts[s]} {s}" for s in ("error", "guardrail", "skipped") if counts[s])
        + f"** of {len(tasks)} tasks · spent ${budget['spent_usd']:.4f} of {cap}"
        + f" · {_duration(data)} · provider {data['provider']}",
        "",
    ]
    attention = [f"- {note}" for note in data.get("notes", [])] + _needs_attention(tasks)
    out += ["## Needs a human", "", *(attention or ["- nothing"]), ""]
    out += [
        "## Tasks",
        "",
        "| task | status | best | passed | cost | attempts (passed/total) | reason |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in tasks:
        trail = " ".join(_attempt_cell(a) for a in t["attempts"]) or "—"
        best = t["best_attempt"] if t["best_attempt"] is not None else "—"
        out.append(
            f"| {t['id']} | {t['status']} | {best} | {passed_cell(t)} "
            f"| ${t['cost_usd']:.4f} | {trail} | {t['reason'] or ''} |"
        )
    return "\n".join(out) + "\n"


def tampering_note(t: dict[str, Any]) -> str:
    """Which attempts tampered, and what the sandbox saw the first time."""
    tampered = [a for a in t["attempts"] if a.get("tampered")]
    why = next((a.get("test_error") for a in tampered if a.get("test_error")), None)
    note = f"tampering detected at attempt(s) {', '.join(str(a['n']) for a in tampered)}"
    return f"{note} ({why})" if why else note


def passed_cell(t: dict[str, Any]) -> str:
    """passed/total, and the hidden tests' share of it when the task has any."""
    hidden = t.get("hidden") or {}
    extra = f" (hidden {hidden['passed']}/{hidden['total']})" if hidden.get("total") else ""
    return f"{t['passed']}/{t['total']}{extra}"


def _attempt_cell(a: dict[str, Any]) -> str:
    if a["extraction_error"]:
        return f"{a['n']}:✗"
    mark = "↩" if a["regressed"] else ""
    return f"{a['n']}:{a['passed']}/{a['total']}{mark}"
