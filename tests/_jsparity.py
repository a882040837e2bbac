"""Per-test parity for JavaScript suites: each test's outcome from the runner run directly on a
plain copy (the candidate at its place), beside the harness's outcome behind the boundary."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.results import Outcome, TestResult
from harness.tasks.spec import TaskSpec


def direct_outcomes(task: TaskSpec, code: str, where: Path) -> dict[str, Outcome]:
    """The task's own test command run with node on a copy of its folder (the candidate
    written at its output path, the JUnit report to a file): test name -> outcome."""
    root = where / task.id
    shutil.copytree(task.base_dir, root, ignore=shutil.ignore_patterns("runs"))
    target = root / task.output.relative_to(task.base_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(code)
    report = where / f"{task.id}.xml"
    tests = [str(t.relative_to(task.base_dir)) for t in (*task.tests, *task.hidden_tests)]
    argv: list[str] = []
    for item in task.test_command:
        if item == "{tests}":
            argv.extend(tests)
        else:
            argv.append(item.replace("{results}", str(report)))
    subprocess.run(argv, cwd=root, capture_output=True, timeout=600, check=False)
    return junit_outcomes(report.read_bytes())


def junit_outcomes(data: bytes) -> dict[str, Outcome]:
    """name -> outcome of every testcase in a JUnit document (node's reporter's shape)."""
    outcomes: dict[str, Outcome] = {}
    for case in ET.fromstring(data).iter("testcase"):
        tags = {child.tag for child in case}
        outcome = Outcome.PASSED
        if "failure" in tags or "error" in tags:
            outcome = Outcome.FAILED
        elif "skipped" in tags:
            outcome = Outcome.SKIPPED
        outcomes[case.get("name", "")] = outcome
    return outcomes


def harness_outcomes(result: TestResult) -> dict[str, Outcome]:
    """name -> outcome, a harness error counted as the failure it is."""
    return {
        c.nodeid: Outcome.FAILED if c.outcome is Outcome.ERROR else c.outcome for c in result.cases
    }
