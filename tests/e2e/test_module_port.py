"""The same-language library port example (tasks/module_port_example) on the simulator."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "tasks" / "module_port_example"

pytestmark = pytest.mark.slow


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A private copy of the example, so the shipped output lands in tmp."""
    target = tmp_path / "example"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("out", "__pycache__"))
    return target / "tasks.yaml"


def _night(tasks: Path, runs: Path) -> tuple[int, dict, Path]:
    argv = ["run", str(tasks), "--provider", "sim", "--seed", "2", "--run-dir", str(runs)]
    code = main([*argv, "--log-level", "error"])
    root = (runs / "latest").resolve()
    return code, json.loads((root / "summary.json").read_text()), root


def _events(root: Path, name: str) -> list[dict]:
    lines = (root / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == name]


def test_the_example_night_runs_on_the_module_port_prompts(example: Path, tmp_path: Path) -> None:
    """A night of the example asks with module_port's prompts, answers from the solution (no
    `sim_from_reference`), ends `completed` and ships its best attempt."""
    code, summary, root = _night(example, tmp_path / "runs")

    [task] = summary["tasks"]
    write = (root / "calls" / "report_args" / "1-write.prompt.md").read_text()
    assert (code, summary["status"]) == (0 if task["status"] == "passed" else 1, "completed")
    assert "from one library or framework to another" in write
    assert "Replace optparse with argparse" in write
    from_reference = [n for n in summary["notes"] if "reference code" in n]
    assert (_events(root, "sim_from_reference"), from_reference) == ([], [])
    if task["output"] is not None:
        best = root / "attempts" / "report_args" / f"{task['best_attempt']}.py"
        assert Path(task["output"]).read_text() == best.read_text()


def test_without_solution_the_night_says_it_answered_from_the_reference(
    example: Path, tmp_path: Path
) -> None:
    """Drop `solution:` and the simulator answers with the optparse original, which passes
    every test: the night says so in one event and in the summary's notes."""
    text = example.read_text()
    example.write_text(text.replace("    solution: _solutions/report_args.py\n", ""))
    assert "solution:" not in example.read_text()

    _, summary, root = _night(example, tmp_path / "runs")

    [task] = summary["tasks"]
    [event] = _events(root, "sim_from_reference")
    assert (task["status"], event["task_id"]) == ("passed", "report_args")
    assert "from optparse import" in Path(task["output"]).read_text()
    assert [n for n in summary["notes"] if "task(s) report_args with their reference" in n]
