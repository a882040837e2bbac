"""End to end on the simulator: the CLI, the run directory contract, the ratchet, exit codes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from tests._quixbugs import CORRECT, quixbugs

EXAMPLE = Path(__file__).resolve().parents[2] / "tasks" / "example"

pytestmark = pytest.mark.slow


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A private copy of the example task list, so shipped outputs land in tmp."""
    target = tmp_path / "example"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("out", "__pycache__"))
    return target / "tasks.yaml"


def run(example: Path, tmp_path: Path, *extra: str) -> tuple[int, dict, Path]:
    runs = tmp_path / "runs"
    code = main(["run", str(example), "--provider", "sim", "--run-dir", str(runs), *extra])
    root = (runs / "latest").resolve()
    return code, json.loads((root / "summary.json").read_text()), root


def test_run_directory_follows_the_contract(example: Path, tmp_path: Path) -> None:
    """events.jsonl, the three summaries' sources, every candidate and the latest link exist."""
    code, summary, root = run(example, tmp_path, "--seed", "3")

    assert code in (0, 1)
    assert (
        summary["schema"] == 1 and summary["provider"] == "sim" and summary["status"] == "completed"
    )
    events = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    assert {"run_started", "attempt_finished", "call_finished", "run_finished"} <= {
        e["event"] for e in events
    }
    for task in summary["tasks"]:
        for attempt in task["attempts"]:
            suffix = ".rejected.txt" if attempt["extraction_error"] else ".py"
            assert (root / "attempts" / task["id"] / f"{attempt['n']}{suffix}").is_file()
    assert (root / "summary.md").read_text().startswith(f"# Run {summary['run_id']}")


@pytest.mark.parametrize("seed", range(12))
def test_shipped_code_is_the_high_water_mark(example: Path, tmp_path: Path, seed: int) -> None:
    """Whatever the walk did, each task ships its best attempt's pass count, and that file."""
    _, summary, root = run(example, tmp_path, "--seed", str(seed))

    for task in summary["tasks"]:
        scored = [a for a in task["attempts"] if a["extraction_error"] is None]
        if not scored:
            assert task["output"] is None
            continue
        assert task["passed"] == max(a["passed"] for a in scored)
        if task["output"] is None:  # a best that passes nothing is not shipped
            assert task["passed"] == 0 and task["status"] == "failed"
            continue
        best = root / "attempts" / task["id"] / f"{task['best_attempt']}.py"
        assert Path(task["output"]).read_text() == best.read_text()


def test_exit_code_is_zero_only_when_every_task_passes(example: Path, tmp_path: Path) -> None:
    """Exit 0 iff all tasks passed; 1 otherwise (a normal night)."""
    for seed in range(4):
        code, summary, _ = run(example, tmp_path / str(seed), "--seed", str(seed))
        all_passed = all(t["status"] == "passed" for t in summary["tasks"])
        assert code == (0 if all_passed else 1)


def test_same_seed_same_night(tmp_path: Path) -> None:
    """From the same starting files, the simulator night is deterministic for a seed."""
    copies = []
    for name in ("a", "b"):
        shutil.copytree(EXAMPLE, tmp_path / name / "example", ignore=shutil.ignore_patterns("out"))
        copies.append(tmp_path / name / "example" / "tasks.yaml")
    _, first, _ = run(copies[0], tmp_path / "a", "--seed", "5")
    _, second, _ = run(copies[1], tmp_path / "b", "--seed", "5")

    def shape(s: dict) -> list:
        return [
            (t["id"], [(a["passed"], a["extraction_error"]) for a in t["attempts"]])
            for t in s["tasks"]
        ]

    assert shape(first) == shape(second)


def test_bad_task_list_exits_2_and_spends_nothing(tmp_path: Path) -> None:
    """A broken task list stops before any run folder or call exists."""
    bad = tmp_path / "tasks.yaml"
    bad.write_text("tasks:\n  - id: x\n")

    code = main(["run", str(bad), "--provider", "sim", "--run-dir", str(tmp_path / "runs")])

    assert code == 2
    assert not (tmp_path / "runs").exists()


def test_summary_command_prints_the_latest_run(example: Path, tmp_path: Path, capsys) -> None:
    """`harness summary RUN_DIR` prints the newest run's markdown summary."""
    _, summary, _ = run(example, tmp_path, "--seed", "1")
    capsys.readouterr()

    assert main(["summary", str(tmp_path / "runs")]) == 0
    assert capsys.readouterr().out.startswith(f"# Run {summary['run_id']}")


@pytest.mark.parametrize("concurrency", ["1", "3"])
def test_budget_cap_stops_the_night_with_exit_3(example: Path, tmp_path: Path, concurrency) -> None:
    """A tight cap stops the run before crossing it: exit 3; every task it stopped, started or
    not, gives the same reason in numbers and is listed under Needs a human."""
    cap = "0.40"  # room for a few calls: a write or fix on mid reserves ~$0.33
    code, summary, root = run(
        example, tmp_path, "--seed", "2", "--budget-usd", cap, "--concurrency", concurrency
    )

    stopped = [t for t in summary["tasks"] if t["cause"] == "budget"]
    reasons = {t["reason"] for t in stopped}
    human = (root / "summary.md").read_text().split("## Tasks")[0]
    assert code == 3
    assert summary["status"] == "budget_stopped"
    assert 0 < summary["budget"]["spent_usd"] <= float(cap)
    assert stopped and any(t["status"] == "skipped" for t in stopped)
    assert len(reasons) == 1, reasons
    reason = reasons.pop()
    assert reason.startswith("budget: run budget cap $0.40 reached: spent $0.")
    assert (
        "the next call's worst case $0." in reason and "raise --budget-usd to at least $" in reason
    )
    assert all(f"- {t['id']}: {t['status']}: budget: run budget cap" in human for t in stopped)
    for task in summary["tasks"]:
        if task["best_attempt"] is not None:
            assert Path(task["output"]).is_file()


def test_the_demo_night_shows_a_reverted_regression(example: Path, tmp_path: Path) -> None:
    """`make demo`'s seed is a night where the ratchet visibly reverts a regression."""
    makefile = (EXAMPLE.parent.parent / "Makefile").read_text()
    seed = re.search(r"^DEMO_SEED \?= (\d+)$", makefile, re.MULTILINE).group(1)

    _, summary, _ = run(example, tmp_path, "--seed", seed)

    assert any(a["regressed"] for t in summary["tasks"] for a in t["attempts"])


def test_every_demo_is_the_same_first_night() -> None:
    """`make demo` removes the last demo's run store and shipped files before it runs: files
    left in tasks/example/out/ would seed every task and make a different night."""
    makefile = (EXAMPLE.parent.parent / "Makefile").read_text()
    recipe = makefile.split("\ndemo:")[1].split("\n\n")[0].splitlines()[1:]
    run_at = next(i for i, line in enumerate(recipe) if "harness run" in line)
    removed = [line.split("rm -rf", 1)[1].split() for line in recipe[:run_at] if "rm -rf" in line]

    assert removed == [["runs/demo", "tasks/example/out"]]


def test_a_night_never_ships_worse_than_the_file_it_started_with(
    example: Path, tmp_path: Path
) -> None:
    """A passing file already at the output path is the starting best: kept, nothing bought."""
    output = example.parent / "out" / "orders_service.py"
    output.parent.mkdir(exist_ok=True)
    good = (example.parent / "solutions" / "orders_service.py").read_text()
    output.write_text(good)

    _, summary, root = run(example, tmp_path, "--seed", "9", "--only", "orders")

    task, *others = summary["tasks"]
    assert (task["status"], task["best_attempt"], task["attempts"], task["cost_usd"]) == (
        "passed",
        0,
        [],
        0,
    )
    assert (task["seed"]["source"], task["seed"]["passed"]) == ("output", task["passed"])
    html = (root / "summary.html").read_text()
    assert "seeded from the file already at its output path" in html
    assert "carried over" not in html
    assert {(t["status"], t["reason"], t["cause"]) for t in others} == {
        ("skipped", "filtered: not selected by --only", "filtered")
    }
    assert output.read_text() == good


def test_resume_refuses_a_different_task_list_or_seed(example: Path, tmp_path: Path) -> None:
    """--resume continues the same night: another task list or sim seed is bad input (exit 2)."""
    run(example, tmp_path, "--seed", "1", "--only", "orders")
    other = tmp_path / "other" / "tasks.yaml"
    shutil.copytree(example.parent, other.parent, ignore=shutil.ignore_patterns("out"))
    runs = str(tmp_path / "runs")

    def resume(tasks: Path, seed: str) -> int:
        return main(
            ["run", str(tasks), "--provider", "sim", "--run-dir", runs, "--seed", seed, "--resume"]
        )

    assert resume(other, "1") == 2
    assert resume(example, "2") == 2
    assert resume(example, "1") in (0, 1)


def test_a_suite_that_skips_its_slow_tests_lets_the_correct_program_pass(tmp_path: Path) -> None:
    """QuixBugs: the conftest skips a slow test without --runslow. The correct program found at
    the output path on a first night passes (3/3, 1 skipped by the suite), so nothing is bought;
    the summary says it was seeded from that file, not carried over from a run."""
    tasks = quixbugs(tmp_path / "quixbugs")
    (tasks.parent / "fixed").mkdir()
    (tasks.parent / "fixed" / "knapsack.py").write_text(CORRECT)

    code, summary, root = run(tasks, tmp_path)

    (task,) = summary["tasks"]
    assert (code, task["status"], task["passed"], task["total"], task["skipped"]) == (
        0,
        "passed",
        3,
        3,
        1,
    )
    assert (task["seed"]["source"], task["cost_usd"]) == ("output", 0)
    assert (
        "| knapsack | passed | seed | 3/3 (+1 skipped by the suite) | $0.00 | — |"
        in (root / "summary.md").read_text()
    )


@pytest.mark.parametrize("seed", range(6))
def test_a_95_cent_cap_is_not_stopped_by_a_reservation_a_cheaper_tier_avoids(
    example: Path, tmp_path: Path, seed: int
) -> None:
    """With the shipped routes, escalation turned on and $0.95, an escalated fix whose frontier
    worst case does not fit stays on mid and concurrent calls wait for each other: the night
    completes under its cap and every fallback is recorded where it happened. (Whether the
    night passes as many tasks as the published loop at this cap is measured by `make bench`.)"""
    config = tmp_path / "harness.yaml"
    config.write_text("loop: {escalate: true}\n")
    code, summary, root = run(
        example, tmp_path, "--seed", str(seed), "--budget-usd", "0.95", "--config", str(config)
    )

    events = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    fallbacks = [e for e in events if e["event"] == "tier_fallback"]
    recorded = [f for t in summary["tasks"] for a in t["attempts"] for f in a["fallbacks"]]
    assert (code in (0, 1), summary["status"]) == (True, "completed")
    assert not [e for e in events if e["event"].startswith("budget_stopped")]
    assert summary["budget"]["spent_usd"] <= 0.95
    assert len(recorded) == len(fallbacks)
    assert set(recorded) <= {"fix: frontier → mid"}
    assert bool(fallbacks) == any("ran on a cheaper tier" in n for n in summary["notes"])
