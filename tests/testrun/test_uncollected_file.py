"""A test file that can only be collected with the candidate (it calls the module while
collected, so the stub's collection fails) takes its ids from the night's own collection; a
candidate that breaks that collection gets an error for the file, never a smaller total."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tasks import TaskSpec
from harness.testrun import TestLimits, run_tests
from harness.testrun.launch import bwrap_works

pytestmark = pytest.mark.slow

PLAIN = "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"
TABLE = (
    "import pytest\n\nimport calc\n\nCASES = calc.cases()\n\n\n"
    "@pytest.mark.parametrize('n', CASES)\ndef test_double(n):\n"
    "    assert calc.add(n, n) == 2 * n\n"
)
HONEST = "def add(a, b):\n    return a + b\n\n\ndef cases():\n    return [1, 2]\n"
BREAKS = "def add(a, b):\n    return a + b\n\n\ndef cases():\n    raise RuntimeError('no table')\n"
MODES = ["in_process", *(["boundary"] if bwrap_works() else [])]


def _task(root: Path, isolation: str) -> TaskSpec:
    (root / "acceptance").mkdir(exist_ok=True)
    (root / "acceptance" / "test_plain.py").write_text(PLAIN)
    (root / "acceptance" / "test_table.py").write_text(TABLE)
    return TaskSpec(
        id="calc",
        base_dir=root,
        reference=(),
        tests=(root / "acceptance" / "test_plain.py", root / "acceptance" / "test_table.py"),
        output=root / "out" / "calc.py",
        isolation=isolation,
    )


@pytest.mark.parametrize("isolation", MODES)
def test_the_honest_candidate_runs_the_files_own_tests(tmp_path: Path, isolation: str) -> None:
    """The file's parametrization comes from the candidate: 1 + 2 tests, all passed."""
    result = run_tests(_task(tmp_path, isolation), HONEST, limits=TestLimits())

    assert (result.passed, result.total, result.all_passed) == (3, 3, True), result.output[-2000:]


@pytest.mark.parametrize("isolation", MODES)
def test_a_candidate_that_breaks_the_files_collection_is_not_all_passed(
    tmp_path: Path, isolation: str
) -> None:
    """`cases()` raising at collection: the file is an error case naming the cause, so the
    one passing test elsewhere is 1 of 2, not 1 of 1."""
    result = run_tests(_task(tmp_path, isolation), BREAKS, limits=TestLimits())
    errors = [(c.nodeid, c.message) for c in result.cases if c.outcome.value == "error"]

    assert (result.passed, result.total, result.all_passed) == (1, 2, False), result.output[-2000:]
    assert errors[0][0] == "acceptance/test_table.py"
    assert "no table" in errors[0][1] or "RuntimeError" in errors[0][1]
