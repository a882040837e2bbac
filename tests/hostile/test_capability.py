"""Capabilities across the value boundary: what the tests pass in grants a purpose, not the
test process. tests/hostile/capability/c_*.py are candidates for a small notes task whose tests
pass a folder (tmp_path) and a Mock; each tries to read the tests through the folder, to rewrite
or reset the mock, or to plant code in a class the test side makes (a record or member named
`__eq__`, forged class nodes). None gets a pass of the test its attack aims at; the honest
candidate passes everything."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tasks.spec import TaskSpec
from harness.testrun import launch
from harness.testrun.run import TestLimits, run_tests
from tests.hostile.test_python import sandbox_survivors

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not launch.bwrap_works(), reason="the boundary needs bubblewrap"),
]

HERE = Path(__file__).parent / "capability"
TASK_DIR = HERE / "task"
NOTES = TaskSpec(
    id="notes",
    base_dir=TASK_DIR,
    reference=(),
    tests=(TASK_DIR / "acceptance" / "test_notes.py",),
    hidden_tests=(TASK_DIR / "hidden" / "test_hidden_notes.py",),
    output=TASK_DIR / "out" / "notes.py",
    isolation="boundary",
)
LIMITS = TestLimits(timeout_s=60, per_test_timeout_s=10.0, collect_timeout_s=30, sandbox="bwrap")
# The tests each attack aims at.
AIMS = {
    "c_walk_tmp_path": ("test_score", "test_hidden_score"),
    "c_cwd_of_path": ("test_score", "test_hidden_score"),
    "c_mock_rewrite": ("test_notify_sends_upper_case", "test_hidden_notify"),
    "c_mock_machinery": ("test_notify_sends_upper_case", "test_hidden_notify"),
    "c_mock_machinery_raw": ("test_notify_sends_upper_case", "test_hidden_notify"),
    "c_enum_dunder_member": ("test_shade", "test_hidden_shade"),
    "c_forged_class_node": ("test_shade", "test_hidden_shade"),
    "c_script_socket": ("test_score", "test_hidden_score"),
}


def _passed(name: str) -> list[str]:
    result = run_tests(NOTES, (HERE / f"{name}.py").read_text(), limits=LIMITS)
    return sorted(c.nodeid.rpartition("::")[2] for c in result.cases if c.outcome == "passed")


def test_the_honest_candidate_passes_every_test() -> None:
    """Folder, mock and enum all carry: 4 visible and 3 hidden tests pass."""
    result = run_tests(NOTES, (HERE / "good_notes.py").read_text(), limits=LIMITS)

    assert (result.passed, result.total, result.hidden_passed, result.error) == (7, 7, 3, None)


@pytest.mark.parametrize("name", sorted(AIMS))
def test_an_attack_on_a_capability_passes_none_of_the_tests_it_aims_at(name: str) -> None:
    """Not one of the aimed-at tests passes, and nothing of the candidate survives the run."""
    passed = _passed(name)

    assert [t for t in AIMS[name] if t in passed] == []
    assert sandbox_survivors() == []
