"""`harness compare`: two nights side by side, per task and in total, from their summaries."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from harness.results import money
from harness.store import RunFolder

__all__ = ["Comparison", "compare_runs", "render_comparison"]

_PASS_CAUSES = ("up_to_date",)  # skipped because it already passed: as good as passed
_NOT_RUN = "not_run"
_ORDER = ("fixed", "regressed", "better", "worse", "cheaper", "dearer", "tests_changed", "same")


@dataclass(frozen=True)
class Side:
    """One task in one night, as its summary has it; a skipped task's status is `passed`
    when it was up to date, else `not_run`."""

    status: str
    passed: int
    total: int
    cost_usd: float
    attempts: int

    @classmethod
    def of(cls, task: dict[str, Any]) -> Side:
        return cls(
            task["status"],
            task["passed"],
            task["total"],
            task["cost_usd"],
            len(task.get("attempts", [])),
        )


@dataclass(frozen=True)
class TaskChange:
    id: str
    a: Side | None
    b: Side | None
    changes: tuple[str, ...]


@dataclass(frozen=True)
class Totals:
    tasks: int
    passed_tasks: int
    passed: int
    total: int
    cost_usd: float
    attempts: int


@dataclass(frozen=True)
class Comparison:
    a: dict[str, Any]  # run_id, provider, status, started_at
    b: dict[str, Any]
    tasks: tuple[TaskChange, ...]
    totals_a: Totals
    totals_b: Totals
    counts: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "tasks": [asdict(t) | {"changes": list(t.changes)} for t in self.tasks],
            "totals": {"a": asdict(self.totals_a), "b": asdict(self.totals_b)},
            "changes": self.counts,
        }


def _side(task: dict[str, Any]) -> Side:
    side = Side.of(task)
    if side.status == "skipped":
        status = "passed" if task.get("cause") in _PASS_CAUSES else _NOT_RUN
        side = Side(status, side.passed, side.total, side.cost_usd, side.attempts)
    return side


def _changes(a: Side | None, b: Side | None) -> tuple[str, ...]:
    """What changed from A to B: fixed/regressed (pass status), better/worse (passes),
    cheaper/dearer; a task in only one night, or not run in one, is said so."""
    if a is None or b is None:
        return ("only_in_a",) if b is None else ("only_in_b",)
    if _NOT_RUN in (a.status, b.status):
        return ("not_run_in_a",) if a.status == _NOT_RUN else ("not_run_in_b",)
    found = []
    if (a.status == "passed") != (b.status == "passed"):
        found.append("fixed" if b.status == "passed" else "regressed")
    elif b.passed != a.passed:
        found.append("better" if b.passed > a.passed else "worse")
    if b.total != a.total:
        found.append("tests_changed")
    if round(b.cost_usd, 6) != round(a.cost_usd, 6):
        found.append("cheaper" if b.cost_usd < a.cost_usd else "dearer")
    return tuple(found) or ("same",)


def _totals(summary: dict[str, Any]) -> Totals:
    sides = [_side(t) for t in summary.get("tasks", [])]
    return Totals(
        tasks=len(sides),
        passed_tasks=sum(s.status == "passed" for s in sides),
        passed=sum(s.passed for s in sides),
        total=sum(s.total for s in sides),
        cost_usd=summary.get("budget", {}).get("spent_usd", sum(s.cost_usd for s in sides)),
        attempts=sum(s.attempts for s in sides),
    )


def _header(summary: dict[str, Any]) -> dict[str, Any]:
    keys = ("run_id", "provider", "status", "started_at")
    return {k: summary.get(k) for k in keys}


def compare_runs(run_a: RunFolder, run_b: RunFolder) -> Comparison:
    """Per task (A's order, then tasks only B has) and in total; either list may differ."""
    a, b = run_a.require_summary(), run_b.require_summary()
    tasks_a = {t["id"]: _side(t) for t in a.get("tasks", [])}
    tasks_b = {t["id"]: _side(t) for t in b.get("tasks", [])}
    ids = list(tasks_a) + [i for i in tasks_b if i not in tasks_a]
    rows = tuple(
        TaskChange(i, tasks_a.get(i), tasks_b.get(i), _changes(tasks_a.get(i), tasks_b.get(i)))
        for i in ids
    )
    found = Counter(change for row in rows for change in row.changes)
    counts = {c: found[c] for c in (*_ORDER, *sorted(found)) if c in found}
    return Comparison(_header(a), _header(b), rows, _totals(a), _totals(b), counts)


def _cells(side: Side | None) -> list[str]:
    if side is None:
        return ["-", "", "", ""]
    return [side.status, f"{side.passed}/{side.total}", money(side.cost_usd), str(side.attempts)]


def _total_cells(t: Totals) -> list[str]:
    return [f"{t.passed_tasks}/{t.tasks} pass", f"{t.passed}/{t.total}", money(t.cost_usd),
            str(t.attempts)]  # fmt: skip


def render_comparison(cmp: Comparison) -> str:
    """An aligned table: per task A's and B's status, passes, cost, attempts, and the change."""
    head = ["task", "A", "passes", "cost", "att", "B", "passes", "cost", "att", "change"]
    rows = [head]
    rows += [[t.id, *_cells(t.a), *_cells(t.b), ", ".join(t.changes)] for t in cmp.tasks]
    summary = ", ".join(f"{n} {name}" for name, n in cmp.counts.items())
    rows.append(["total", *_total_cells(cmp.totals_a), *_total_cells(cmp.totals_b), summary])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        f"A: {cmp.a['run_id']} ({cmp.a['provider']}, {cmp.a['status']})",
        f"B: {cmp.b['run_id']} ({cmp.b['provider']}, {cmp.b['status']})",
        "",
    ]
    for n, row in enumerate(rows):
        if n == len(rows) - 1:
            lines.append("  ".join("-" * w for w in widths).rstrip())
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)
