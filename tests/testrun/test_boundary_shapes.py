"""Honest shapes behind the value boundary: a module that defines its own exceptions,
dataclasses with methods, value classes, a custom tzinfo, context managers and module state
passes exactly what plain pytest passes (tests/testrun/shapes)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.tasks import TaskSpec
from harness.testrun import TestLimits, run_tests
from harness.testrun.launch import bwrap_works

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bwrap_works(), reason="the boundary needs bubblewrap"),
]

HERE = Path(__file__).parent / "shapes"
LIMITS = TestLimits(timeout_s=120, per_test_timeout_s=20, collect_timeout_s=60)


def _task(root: Path) -> TaskSpec:
    return TaskSpec(
        id="inventory",
        base_dir=root,
        reference=(),
        tests=(root / "acceptance" / "test_inventory.py",),
        output=root / "out" / "inventory.py",
        isolation="boundary",
    )


def test_every_honest_shape_passes_behind_the_boundary_as_in_plain_pytest(
    tmp_path: Path,
) -> None:
    """Per test, the boundary's outcome equals plain pytest's, and plain pytest passes all."""
    shutil.copytree(HERE / "acceptance", tmp_path / "acceptance")
    code = (HERE / "inventory_solution.py").read_text()
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "inventory.py").write_text(code)
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "acceptance"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "plain"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )

    result = run_tests(_task(tmp_path), code, limits=LIMITS)
    failing = [c.nodeid for c in result.cases if c.outcome.value != "passed"]

    assert (plain.returncode, failing, result.passed, result.tampered) == (0, [], 21, False), (
        plain.stdout[-2000:] + result.output[-4000:]
    )


def test_a_value_the_boundary_cannot_carry_is_its_own_outcome_never_the_candidates(
    tmp_path: Path,
) -> None:
    """A list that holds itself cannot cross: the test counts as failed, is marked uncarried,
    is left out of what a fix prompt is fed, and the task is listed for a human."""
    from harness.pipeline.task import _uncarried

    (tmp_path / "acceptance").mkdir()
    (tmp_path / "acceptance" / "test_loop.py").write_text(
        "from loop import length\n\n\n"
        "def test_a_cycle():\n    a = []\n    a.append(a)\n    assert length(a) == 1\n\n\n"
        "def test_plain():\n    assert length([1, 2]) == 2\n"
    )
    task = TaskSpec(
        id="loop",
        base_dir=tmp_path,
        reference=(),
        tests=(tmp_path / "acceptance" / "test_loop.py",),
        output=tmp_path / "out" / "loop.py",
        isolation="boundary",
    )

    result = run_tests(task, "def length(x):\n    return len(x)\n", limits=LIMITS)
    marked = [(c.nodeid.rpartition("::")[2], c.uncarried) for c in result.cases]

    assert (marked, result.passed, result.failing(), len(_uncarried(result))) == (
        [("test_a_cycle", True), ("test_plain", False)],
        1,
        (),
        1,
    )


def test_a_failed_subtest_fails_its_test_as_plain_pytest_reports_it(tmp_path: Path) -> None:
    """unittest's subTest (pytest's own subtests): a failed subtest fails the test, a test whose
    subtests all pass passes; no honest suite is called tampered for using them."""
    (tmp_path / "acceptance").mkdir()
    (tmp_path / "acceptance" / "test_sub.py").write_text(
        "import unittest\n\nfrom mod import f\n\n\n"
        "class T(unittest.TestCase):\n"
        "    def test_a(self):\n"
        "        for i in range(3):\n"
        "            with self.subTest(i=i):\n"
        "                self.assertNotEqual(i, f())\n\n"
        "    def test_b(self):\n"
        "        for i in range(2):\n"
        "            with self.subTest(i=i):\n"
        "                self.assertEqual(f(), 1)\n"
    )
    task = TaskSpec(
        id="sub",
        base_dir=tmp_path,
        reference=(),
        tests=(tmp_path / "acceptance" / "test_sub.py",),
        output=tmp_path / "out" / "mod.py",
        isolation="boundary",
    )

    result = run_tests(task, "def f():\n    return 1\n", limits=LIMITS)
    outcomes = [(c.nodeid.rpartition("::")[2], c.outcome.value) for c in result.cases]

    assert (outcomes, result.tampered) == ([("test_a", "failed"), ("test_b", "passed")], False)


SCRIPT_TESTS = """import os
import subprocess
import sys
import tempfile

import pytest

from cli import shout

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "out", "cli.py")


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, SCRIPT, *args], input=stdin, capture_output=True, text=True
    )


def test_the_module_imported():
    assert shout("a") == "A"


def test_stdin_to_stdout():
    done = run("--bang", stdin="abc\\n")
    assert (done.returncode, done.stdout, done.stderr) == (0, "ABC!\\n", "")


def test_a_file_from_tempfile():
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("from a file\\n")
    done = run(f.name)
    os.unlink(f.name)
    assert (done.returncode, done.stdout) == (0, "FROM A FILE\\n")


def test_its_exit_status_and_stderr():
    done = run("--fail")
    assert (done.returncode, done.stderr) == (3, "no\\n")
"""
SCRIPT_MODULE = """import sys


def shout(text):
    return text.upper()


def main(argv):
    if "--fail" in argv:
        print("no", file=sys.stderr)
        return 3
    names = [a for a in argv if not a.startswith("--")]
    text = open(names[0]).read() if names else sys.stdin.read()
    for line in text.splitlines():
        print(shout(line) + ("!" if "--bang" in argv else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""


def test_a_test_that_runs_the_module_as_a_script_runs_the_candidate(tmp_path: Path) -> None:
    """A test that runs the candidate's file as a script (`python mod.py`, its stdin, a
    tempfile named on the command line) gets the candidate's output and exit status, as in
    plain pytest."""
    (tmp_path / "acceptance").mkdir()
    (tmp_path / "acceptance" / "test_cli.py").write_text(SCRIPT_TESTS)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "cli.py").write_text(SCRIPT_MODULE)
    task = TaskSpec(
        id="cli",
        base_dir=tmp_path,
        reference=(),
        tests=(tmp_path / "acceptance" / "test_cli.py",),
        output=tmp_path / "out" / "cli.py",
        isolation="boundary",
    )

    result = run_tests(task, SCRIPT_MODULE, limits=LIMITS)
    outcomes = [(c.nodeid.rpartition("::")[2], c.outcome.value) for c in result.cases]

    assert (outcomes, result.tampered) == (
        [
            ("test_the_module_imported", "passed"),
            ("test_stdin_to_stdout", "passed"),
            ("test_a_file_from_tempfile", "passed"),
            ("test_its_exit_status_and_stderr", "passed"),
        ],
        False,
    ), result.output[-3000:]
