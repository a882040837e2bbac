"""summary.json (schema 1) and summary.md."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

from harness.report import RunSummary, write_summary
from harness.results import AttemptRecord, RunStatus, StopCause, TaskResult, TaskStatus

START = dt.datetime(2026, 11, 21, 1, 0, tzinfo=dt.UTC)


def summary() -> RunSummary:
    attempts = (
        AttemptRecord(1, "write", 8, 9, 0, 17, Decimal("0.12"), improved=True),
        AttemptRecord(2, "fix", 12, 5, 0, 17, Decimal("0.2"), improved=True),
        AttemptRecord(3, "fix", 10, 7, 0, 17, Decimal("0.19"), regressed=True),
    )
    orders = TaskResult(
        "orders",
        TaskStatus.PARTIAL,
        "3 attempts used",
        2,
        12,
        5,
        0,
        17,
        Decimal("0.51"),
        "/x/out/orders.py",
        attempts,
    )
    skipped = TaskResult("users", TaskStatus.SKIPPED, "budget", cause=StopCause.BUDGET)
    return RunSummary(
        "r1",
        START,
        START + dt.timedelta(minutes=61, seconds=5),
        RunStatus.BUDGET_STOPPED,
        "sim",
        Decimal(30),
        Decimal("0.51"),
        (orders, skipped),
    )


def test_summary_json_follows_schema_1(tmp_path) -> None:
    """The contract's fields, with floats for money and ISO timestamps."""
    data = json.loads(json.dumps(write_summary(tmp_path, summary())))
    on_disk = json.loads((tmp_path / "summary.json").read_text())

    assert data == on_disk
    assert data["schema"] == 1
    assert data["status"] == "budget_stopped"
    assert data["budget"] == {"cap_usd": 30.0, "spent_usd": 0.51}
    task = data["tasks"][0]
    assert {
        k: task[k] for k in ("id", "status", "best_attempt", "passed", "total", "cost_usd")
    } == {
        "id": "orders",
        "status": "partial",
        "best_attempt": 2,
        "passed": 12,
        "total": 17,
        "cost_usd": 0.51,
    }
    assert task["attempts"][2] == task["attempts"][2] | {
        "n": 3,
        "kind": "fix",
        "regressed": True,
        "extraction_error": None,
        "passed": 10,
    }


def test_markdown_puts_totals_then_attention_then_table(tmp_path) -> None:
    """The morning read: totals line, what needs a human, the per-task table."""
    write_summary(tmp_path, summary())
    text = (tmp_path / "summary.md").read_text()

    totals = "**0 passed, 1 partial, 0 failed, 1 skipped** of 2 tasks"
    assert f"{totals} · spent $0.5100 of $30.00 · 1h01m05s" in text
    assert text.index("## Needs a human") < text.index("## Tasks")
    assert "- orders: regression reverted at attempt(s) 3" in text
    assert "- users: skipped: budget" in text
    assert (
        "| orders | partial | 2 | 12/17 | $0.5100 | 1:8/17 2:12/17 3:10/17↩ | 3 attempts used |"
        in text
    )
