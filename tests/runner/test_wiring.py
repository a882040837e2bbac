"""runner.wiring seen from a night: what the morning summary is told about the simulator, and
the test runner taking each task's node-module list from the operator's policy."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.config import load_config
from harness.guardrails import load_policy
from harness.llm import ToolCall
from harness.runner import RunArgs, check_inputs
from harness.runner.wiring import _sandbox, _toolbox
from tests._foreign import candidate, go_task, js_task, needs_go, needs_node
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


@needs_node
def test_a_policy_allowance_reaches_the_sandbox_for_its_task_only(tmp_path: Path) -> None:
    """With `allowed_js_modules: {calc_js: [fs]}`, a candidate loading fs runs for calc_js
    (every test passes) and is refused before running for any other task id."""
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("allowed_js_modules:\n  calc_js: [fs]\n")
    policy = load_policy(policy_file, task_list_dir=tmp_path)
    sandbox = _sandbox(SimpleNamespace(config=load_config(), policy=policy))  # type: ignore[arg-type]
    code = 'const fs = require("node:fs");\n' + candidate("js", "good")

    allowed = sandbox.run(js_task(), code)
    other = sandbox.run(js_task(id="other_js"), code)

    assert (allowed.rejected, allowed.passed, allowed.total) == (False, 3, 3)
    assert other.rejected and "may not load the module 'node:fs'" in (other.error or "")


@needs_go
def test_a_go_allowance_reaches_the_sandbox_for_its_task_only(tmp_path: Path) -> None:
    """With `allowed_go_packages: {calc_go: [os]}`, a candidate importing os runs for calc_go
    (every test passes) and is refused before running for any other task id."""
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("allowed_go_packages:\n  calc_go: [os]\n")
    policy = load_policy(policy_file, task_list_dir=tmp_path)
    sandbox = _sandbox(SimpleNamespace(config=load_config(), policy=policy))  # type: ignore[arg-type]
    code = candidate("go", "good").replace(
        "package calc\n", 'package calc\n\nimport "os"\n\nvar _ = os.Getpid\n', 1
    )

    allowed = sandbox.run(go_task(), code)
    other = sandbox.run(go_task(id="other_go"), code)

    assert (allowed.rejected, allowed.passed, allowed.total) == (False, 3, 3)
    assert other.rejected and "os" in (other.error or "")


def test_context_tools_never_read_another_task_lists_hidden_inputs(tmp_path: Path) -> None:
    """Two task lists side by side: the tools of the night of one refuse the other's hidden
    tests, its solution and the list itself, and still read a plain file of the folder."""
    tasks = write_tasks(tmp_path / "tasks", [Task("calc", max_attempts=1)])
    folder = tasks.parent
    (folder / "other" / "hidden").mkdir(parents=True)
    (folder / "other" / "hidden" / "test_secret.py").write_text("EXPECTED = 41\n")
    (folder / "other" / "sol.py").write_text("SOLVED = 1\n")
    (folder / "other.yaml").write_text(
        "defaults: {hidden_tests: [other/hidden/test_secret.py]}\ntasks:\n  - id: other\n"
        "    reference: legacy/calc.py\n    tests: acceptance/test_calc.py\n"
        "    output: out/other_service.py\n    solution: other/sol.py\n"
    )
    (folder / "notes.txt").write_text("plain\n")
    config = tmp_path / "on.yaml"
    config.write_text("loop: {context_tools: {enabled: true}}\n")
    args = RunArgs(tasks=tasks, provider="sim", config=config, run_dir=tmp_path / "runs")
    inputs = check_inputs(args)
    box = _toolbox(args, inputs, None)(inputs.specs[0])  # type: ignore[arg-type]
    paths = ["other/hidden/test_secret.py", "other/sol.py", "other.yaml", "notes.txt"]

    results = box.run(
        tuple(ToolCall(f"c{i}", "read_file", f'{{"path": "{p}"}}') for i, p in enumerate(paths))
    )

    assert [r.is_error for r in results] == [True, True, True, False]
