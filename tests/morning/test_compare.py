"""`harness compare`: two nights per task and in total, across task lists that differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.morning import compare_runs
from harness.store import find_run


def summary(folder: Path, *tasks: dict, spent: float = 1.0) -> Path:
    """A run folder holding only a summary.json with these tasks."""
    folder.mkdir(parents=True)
    doc = {"schema": 1, "run_id": folder.name, "provider": "sim", "status": "completed",
           "started_at": "2026-01-01T00:00:00+00:00", "tasks": list(tasks),
           "budget": {"cap_usd": 30.0, "spent_usd": spent}}  # fmt: skip
    (folder / "summary.json").write_text(json.dumps(doc))
    return folder


def task(id: str, status: str, passed: int, total: int, cost: float, **extra) -> dict:
    attempts = [{"n": n} for n in range(1, extra.pop("attempts", 1) + 1)]
    return dict(id=id, status=status, passed=passed, total=total, cost_usd=cost,
                attempts=attempts, **extra)  # fmt: skip


def test_seed_1_against_seed_2_of_the_example(example_nights, capsys):
    """Each task's change and the totals; --json is valid JSON with the same changes."""
    a, b = example_nights(1), example_nights(2)

    text_code = main(["compare", str(a), str(b)])
    text = capsys.readouterr().out
    json_code = main(["compare", str(a), str(b), "--json"])
    doc = json.loads(capsys.readouterr().out)

    sa, sb = (json.loads((r / "summary.json").read_text()) for r in (a, b))
    assert (text_code, json_code) == (0, 0)
    assert [t["id"] for t in sa["tasks"]] == [t["id"] for t in doc["tasks"]]
    for row, ta, tb in zip(doc["tasks"], sa["tasks"], sb["tasks"], strict=True):
        assert (row["a"]["passed"], row["b"]["passed"]) == (ta["passed"], tb["passed"])
        assert row["changes"] and f"{row['id']} " in text
    total_a = sum(t["passed"] for t in sa["tasks"])
    assert (total_a, sb["budget"]["spent_usd"]) == (
        doc["totals"]["a"]["passed"],
        doc["totals"]["b"]["cost_usd"],
    )
    assert text.splitlines()[-1].startswith("total")


def test_differing_task_lists_list_one_sided_tasks(tmp_path):
    """A task only in A or only in B is listed as such, and counted."""
    a = summary(tmp_path / "a", task("x", "passed", 3, 3, 0.1), task("gone", "failed", 0, 2, 0.2))
    b = summary(tmp_path / "b", task("x", "passed", 3, 3, 0.1), task("new", "passed", 1, 1, 0.1))

    cmp = compare_runs(find_run(a), find_run(b))

    assert [(t.id, t.changes) for t in cmp.tasks] == [
        ("x", ("same",)),
        ("gone", ("only_in_a",)),
        ("new", ("only_in_b",)),
    ]
    assert cmp.counts == {"same": 1, "only_in_a": 1, "only_in_b": 1}


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (("partial", 2, 0.2), ("passed", 3, 0.3), ("fixed", "dearer")),
        (("passed", 3, 0.2), ("partial", 2, 0.1), ("regressed", "cheaper")),
        (("partial", 1, 0.2), ("partial", 2, 0.2), ("better",)),
        (("failed", 0, 0.2), ("failed", 0, 0.2), ("same",)),
    ],
)
def test_change_labels(tmp_path, before, after, expected):
    """Pass status decides fixed/regressed, then passes better/worse; cost cheaper/dearer."""
    a = summary(tmp_path / "a", task("t", before[0], before[1], 3, before[2]))
    b = summary(tmp_path / "b", task("t", after[0], after[1], 3, after[2]))

    (row,) = compare_runs(find_run(a), find_run(b)).tasks

    assert expected == row.changes


def test_up_to_date_counts_as_passed_and_a_budget_skip_as_not_run(tmp_path):
    """A task skipped as up to date has not regressed; one skipped by the budget did not run."""
    done = task("t", "passed", 3, 3, 0.3)
    a = summary(tmp_path / "a", done, {**done, "id": "u"})
    b = summary(
        tmp_path / "b",
        task("t", "skipped", 3, 3, 0.0, cause="up_to_date", attempts=0),
        task("u", "skipped", 0, 0, 0.0, cause="budget", attempts=0),
    )

    rows = compare_runs(find_run(a), find_run(b)).tasks

    assert [r.changes for r in rows] == [("cheaper",), ("not_run_in_b",)]


def test_a_run_without_summary_is_bad_input(tmp_path, capsys):
    """A killed run (events but no summary) cannot be compared: exit 2, saying why."""
    (tmp_path / "killed").mkdir()
    (tmp_path / "killed" / "events.jsonl").write_text("")
    ok = summary(tmp_path / "ok", task("t", "passed", 1, 1, 0.1))

    code = main(["compare", str(tmp_path / "killed"), str(ok)])

    assert code == 2
    assert "no summary.json" in capsys.readouterr().err
