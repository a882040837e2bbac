"""Start-up wiring seen from a night: what the morning summary is told about the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._night import Task, events, run_cli, write_tasks

pytestmark = pytest.mark.slow


def test_a_task_without_solution_is_named_in_the_event_and_the_summary(tmp_path: Path) -> None:
    """The simulator answers a task with no `solution:` from its reference: one
    `sim_from_reference` event for that task only, and a note in summary.json, .md and .html
    naming it (and not the task that has a solution)."""
    tasks = write_tasks(
        tmp_path / "tasks",
        [Task("bare", solved=True, max_attempts=2), Task("real", max_attempts=1)],
    )

    _, summary, root = run_cli(tasks, tmp_path / "runs", "--seed", "1")

    said = [e["task_id"] for e in events(root) if e["event"] == "sim_from_reference"]
    notes = [n for n in summary["notes"] if "reference code" in n]
    assert (said, len(notes)) == (["bare"], 1)
    assert "task(s) bare with their reference code" in notes[0] and "real" not in notes[0]
    assert notes[0] in (root / "summary.md").read_text()
    assert "task(s) bare with their reference code" in (root / "summary.html").read_text()


def test_a_night_where_every_task_has_a_solution_has_no_such_note(tmp_path: Path) -> None:
    """With a solution for every task the simulator never answers from a reference: no
    event, no note."""
    tasks = write_tasks(tmp_path / "tasks", [Task("real", max_attempts=1)])

    _, summary, root = run_cli(tasks, tmp_path / "runs", "--seed", "1")

    said = [e for e in events(root) if e["event"] == "sim_from_reference"]
    assert (said, [n for n in summary["notes"] if "reference code" in n]) == ([], [])


def test_a_task_left_out_by_only_is_not_named(tmp_path: Path) -> None:
    """The note names only the night's tasks: one without a solution left out by --only is
    neither announced nor noted."""
    tasks = write_tasks(
        tmp_path / "tasks", [Task("bare", solved=True), Task("real", max_attempts=1)]
    )

    _, summary, root = run_cli(tasks, tmp_path / "runs", "--seed", "1", "--only", "real")

    said = [e for e in events(root) if e["event"] == "sim_from_reference"]
    assert (said, [n for n in summary["notes"] if "reference code" in n]) == ([], [])
