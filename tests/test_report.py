"""summary.json (schema 1) and summary.md."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
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
    assert f"{totals} · spent $0.51 of $30.00 · 1h01m05s" in text
    assert text.index("## Needs a human") < text.index("## Tasks")
    assert "- orders: regression reverted at attempt(s) 3" in text
    assert "- users: skipped: budget" in text
    assert (
        "| orders | partial | 2 | 12/17 | $0.51 | 1:8/17 2:12/17 3:10/17↩ | 3 attempts used |"
        in text
    )


def test_money_keeps_every_digit_a_small_cap_needs(tmp_path) -> None:
    """A $0.0555 cap and a $0.030912 spend print as such, never rounded to cents."""
    small = replace(summary(), cap_usd=Decimal("0.0555"), spent_usd=Decimal("0.030912"))
    write_summary(tmp_path, small)
    text = (tmp_path / "summary.md").read_text()

    assert "spent $0.030912 of $0.0555" in text
    assert "$0.06" not in text and "$0.03 " not in text


def test_every_task_a_stop_cut_short_needs_a_human(tmp_path) -> None:
    """Tasks cut short by a budget cap, a halt or a signal, started or not, and a prompt too
    long are each listed under Needs a human with their reason."""
    causes = (StopCause.BUDGET, StopCause.HALTED, StopCause.RUN_STOPPED, StopCause.CONTEXT_TOO_LONG)
    tasks = tuple(
        TaskResult(f"t{i}", status, f"why {i}", cause=cause)
        for i, (status, cause) in enumerate(
            zip([TaskStatus.SKIPPED, TaskStatus.PARTIAL] * 2, causes, strict=True)
        )
    )
    write_summary(tmp_path, replace(summary(), tasks=tasks))
    human = (tmp_path / "summary.md").read_text().split("## Tasks")[0]

    for i, task in enumerate(tasks):
        assert f"- t{i}: {task.status.value}: why {i}" in human
