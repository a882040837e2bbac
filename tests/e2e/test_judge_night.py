"""A night with the principle judge on, end to end on the simulator: the CLI, the calls
folder, the event, summary.json and the metric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

pytestmark = pytest.mark.slow

OPS = """def apply(name, a, b):
    if name == "plus":
        return a + b
    if name == "minus":
        return a - b
    raise ValueError(name)
"""
TESTS = """from ops_port import apply


def test_plus():
    assert apply("plus", 2, 3) == 5


def test_minus():
    assert apply("minus", 5, 3) == 2
"""


def _task_list(root: Path, judge: str) -> tuple[Path, Path]:
    """One task whose honest port compares the tests' literals: the gate opens."""
    for rel, text in {
        "legacy/ops.py": OPS,
        "solutions/ops_port.py": OPS,
        "acceptance/test_ops.py": TESTS,
        "tasks.yaml": "tasks:\n  - id: ops\n    reference: legacy/ops.py\n"
        "    tests: acceptance/test_ops.py\n    output: out/ops_port.py\n"
        "    solution: solutions/ops_port.py\n    max_attempts: 6\n",
        "harness.yaml": f"loop:\n  judge: {judge}\nmetrics: {{path: {root / 'm.prom'}}}\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root / "tasks.yaml", root / "harness.yaml"


def test_a_judged_night_records_the_call_event_outcome_and_metric(tmp_path: Path) -> None:
    """The judge's call is a recorded, priced call of the task; its outcome is an event, a
    field of the task in summary.json and a sample of harness_judge_outcome_total."""
    tasks, config = _task_list(tmp_path, "{enabled: true}")
    runs = tmp_path / "runs"

    code = main(["run", str(tasks), "--provider", "sim", "--seed", "1", "--run-dir", str(runs),
                 "--config", str(config)])  # fmt: skip

    root = (runs / "latest").resolve()
    summary = json.loads((root / "summary.json").read_text())
    task = summary["tasks"][0]
    events = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    judged = [e for e in events if e["event"] == "judge"]
    calls = [e for e in events if e["event"] == "call_finished"]
    assert (code, task["status"], task["judge"]) == (0, "passed", judged[0]["outcome"])
    assert [e["outcome"] in ("approve", "flag") for e in judged] == [True]
    assert sorted((root / "calls" / "ops").glob("*-judge.reply.md"))
    assert sum(float(e["cost_usd"]) for e in calls) == pytest.approx(task["cost_usd"], abs=1e-6)
    prom = (tmp_path / "m.prom").read_text().splitlines()
    assert f'harness_judge_outcome_total{{outcome="{task["judge"]}"}} 1' in prom


def test_a_shown_principle_the_prompts_lack_is_bad_input(tmp_path: Path) -> None:
    """`shown: [9]` with four principles: exit 2 before anything runs."""
    tasks, config = _task_list(tmp_path, "{enabled: true, shown: [9]}")

    code = main(["run", str(tasks), "--provider", "sim", "--run-dir", str(tmp_path / "runs"),
                 "--config", str(config)])  # fmt: skip

    assert (code, (tmp_path / "runs").exists()) == (2, False)
