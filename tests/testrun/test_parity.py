"""The examples' honest candidates (their solutions) score exactly what the test runner run
directly says: tasks/example and a QuixBugs-shaped suite against plain pytest (behind the
value boundary, the default), the Go and JavaScript examples against `go test` and
`node --test`. The harness's runners neither lose nor invent a pass. Skipped, with the
reason, where a toolchain is not installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.tasks import TaskSpec, load_tasks
from harness.testrun import TestLimits, run_tests
from harness.testrun.launch import bwrap_works
from tests import _quixbugs
from tests._foreign import needs_go, needs_node

pytestmark = pytest.mark.slow

TASKS = Path(__file__).resolve().parents[2] / "tasks"
LIMITS = TestLimits(timeout_s=300, per_test_timeout_s=60)


def _copy_with_solution(spec: TaskSpec, where: Path) -> Path:
    """A copy of the example folder with the task's solution at its output place."""
    assert spec.solution is not None
    root = where / spec.id
    shutil.copytree(spec.base_dir, root, ignore=shutil.ignore_patterns("_solutions", "runs"))
    target = root / spec.output.relative_to(spec.base_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(spec.solution, target)
    return root


def _go_direct(spec: TaskSpec, where: Path) -> tuple[int, int]:
    """`go test -json -count=1 .` in the task's package: (passed, total) top-level tests."""
    package = _copy_with_solution(spec, where) / spec.output.relative_to(spec.base_dir).parent
    env = {**os.environ, "GOPROXY": "off", "GOFLAGS": "", "CGO_ENABLED": "0"}
    argv = ["go", "test", "-json", "-count=1", "."]
    done = subprocess.run(argv, cwd=package, env=env, capture_output=True, text=True, timeout=600)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    top = [e for e in events if e.get("Test") and "/" not in e["Test"]]
    ended = [e for e in top if e["Action"] in ("pass", "fail", "skip")]
    return sum(e["Action"] == "pass" for e in ended), len(ended)


def _node_direct(spec: TaskSpec, where: Path) -> tuple[int, int]:
    """`node --test` on the task's test file (TAP): (passed, total) top-level tests."""
    root = _copy_with_solution(spec, where)
    tests = [str(t.relative_to(spec.base_dir)) for t in spec.tests]
    argv = ["node", "--test", "--test-reporter=tap", *tests]
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=600)
    lines = done.stdout.splitlines()  # top-level results: the unindented `ok N` / `not ok N`
    passed = sum(1 for line in lines if re.match(r"ok \d+ - ", line))
    return passed, passed + sum(1 for line in lines if re.match(r"not ok \d+ - ", line))


def _pytest_direct(spec: TaskSpec, where: Path) -> tuple[int, int]:
    """Plain `python -m pytest` on the task's tests, the output's folder and the task folder
    on the path: (passed, total) from its JUnit report."""
    root = _copy_with_solution(spec, where)
    out = root / spec.output.relative_to(spec.base_dir).parent
    report = where / f"{spec.id}.xml"
    tests = [str(t.relative_to(spec.base_dir)) for t in spec.tests]
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(out), str(root)])}
    subprocess.run([*argv, f"--junitxml={report}"], cwd=root, env=env, capture_output=True,
                   timeout=600)  # fmt: skip
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    counts = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    total = counts["tests"] - counts["skipped"]
    return total - counts["failures"] - counts["errors"], total


needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="the value boundary needs bubblewrap")


def _params(example: str, mark: pytest.MarkDecorator) -> list:
    specs = load_tasks(TASKS / example / "tasks.yaml")
    return [pytest.param(s, id=f"{example}-{s.id}", marks=mark) for s in specs]


@pytest.mark.parametrize(
    "spec",
    [
        *_params("example", needs_bwrap),
        pytest.param(None, id="quixbugs-knapsack", marks=needs_bwrap),  # built in tmp_path
        *_params("go_example", needs_go),
        *_params("js_example", needs_node),
    ],
)
def test_an_honest_candidate_scores_what_the_runner_run_directly_says(
    spec: TaskSpec | None, tmp_path: Path
) -> None:
    """Passed and total of the solution through `run_tests` equal the direct run's, and that
    is every test (an honest candidate is never refused or short-changed)."""
    if spec is None:
        [spec] = load_tasks(_quixbugs.quixbugs(tmp_path / "suite"))
    direct = {"python": _pytest_direct, "go": _go_direct}.get(spec.language, _node_direct)
    assert spec.solution is not None

    result = run_tests(spec, spec.solution.read_text(), limits=LIMITS)

    passed, total = direct(spec, tmp_path / "direct")
    assert (result.passed, result.total, result.error) == (passed, total, None)
    assert passed == total > 0
