"""The value boundary (isolation: boundary) against hostile candidates: none gets a pass.

tests/hostile/boundary/b_*.py are candidates written against a small shop task with a support
module (money.py: a record, an error, a ledger object, a base class) and hidden tests; each
lies about equality, raises exceptions that match anything or end a test, reads the tests by
import, sys.modules, gc, the file system or /proc, patches pytest, reaches through the objects
the tests pass in, forges output, or dies and hangs. Behind the boundary every one of them
scores 0; the honest candidate passes everything in both modes; the planted in-process
candidates (h_*.py) score 0 behind the boundary too.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from harness.pipeline.task import _hidden_trails
from harness.report.facts import attention
from harness.results import Outcome
from harness.tasks.spec import TaskSpec
from harness.testrun import launch
from harness.testrun.run import TestLimits, _execute, run_tests
from tests.hostile.test_python import (  # noqa: F401  (fixtures)
    CANDIDATES,
    MARKERS,
    TASK,
    limits,
    plant,
    record_markers,
    sandbox_survivors,
    world,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not launch.bwrap_works(), reason="the boundary needs bubblewrap"),
]

HERE = Path(__file__).parent / "boundary"
TASK_DIR = HERE / "task"
SHOP = TaskSpec(
    id="shop",
    base_dir=TASK_DIR,
    reference=(),
    tests=(TASK_DIR / "acceptance" / "test_shop.py",),
    hidden_tests=(TASK_DIR / "hidden" / "test_hidden_shop.py",),
    support=(TASK_DIR / "money.py", TASK_DIR / "conftest.py"),
    output=TASK_DIR / "out" / "shop.py",
    isolation="boundary",
)
HOSTILE = sorted(p.stem for p in HERE.glob("b_*.py") if p.stem != "b_special_case")
# In-process attacks whose payoff is constants that happen to be the visible answers.
SPECIAL_CASING = {"h_signal_frames"}
LIMITS = TestLimits(timeout_s=60, per_test_timeout_s=5.0, collect_timeout_s=20, sandbox="bwrap")


def code(name: str) -> str:
    return (HERE / f"{name}.py").read_text()


@pytest.mark.parametrize("mode", ["boundary", "in_process"])
def test_the_honest_shop_passes_every_test_in_both_modes(mode: str) -> None:
    """The honest candidate passes all 7 visible and 4 hidden tests, with or without the
    boundary: records, support errors, ledger handles and the Shop subclass all carry."""
    result = run_tests(replace(SHOP, isolation=mode), code("good_shop"), limits=LIMITS)

    assert (result.passed, result.total, result.hidden_passed, result.error) == (11, 11, 4, None)


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_candidate_gets_no_pass_behind_the_boundary(name: str) -> None:
    """Each attack class, several instances: not one test passes (nor is skipped) and
    nothing of it survives the run."""
    result = run_tests(SHOP, code(name), limits=LIMITS)

    assert (result.passed, result.skipped, result.total) == (0, 0, 11), result.output[-3000:]
    assert sandbox_survivors() == []


def test_the_hidden_tests_are_out_of_every_reach_of_the_candidate() -> None:
    """The readers find no test file, table or marker: by import, sys.modules, gc, the file
    system and /proc (their finds would be returned through quote())."""
    found = []
    for name in ("b_read_fs", "b_read_proc"):
        result = run_tests(SHOP, code(name).replace("return SEEN", "return 0"), limits=LIMITS)
        found.append((result.passed, "HIDDEN-KEY" in result.output, "VISIBLE-KEY" in result.output))

    assert found == [(0, False, False), (0, False, False)]


def test_special_casing_passes_visible_fails_hidden_and_needs_a_human() -> None:
    """Hard-coded visible answers pass every visible test and fail the hidden ones; the
    summary lists the task under "Needs a human" (hidden tests trail the visible ones)."""
    result = run_tests(SHOP, code("b_special_case"), limits=LIMITS)
    warnings = _hidden_trails(result)
    task = {
        "id": "shop",
        "status": "partial",
        "passed": result.passed,
        "total": result.total,
        "output": "out/shop.py",
        "attempts": [],
        "warnings": warnings,
    }
    listed = [kind for kind, task_id, _ in attention({"tasks": [task]}) if task_id == "shop"]

    assert (result.visible_passed, result.visible_total, result.hidden_passed, listed) == (
        7,
        7,
        0,
        ["warning"],
    )


@pytest.mark.parametrize("name", CANDIDATES)
def test_the_in_process_hostile_candidates_get_no_pass_behind_the_boundary(
    name: str,
    world: dict[str, object],  # noqa: F811  (the fixture imported above)
) -> None:
    """The planted in-process attacks (tests/hostile/h_*.py), with the pre-check bypassed,
    score 0 of 3 behind the boundary, and nothing of them survives. h_signal_frames returns
    the two visible answers as constants once its (own-process) signal trick works: behind
    the boundary that is plain special-casing, scored as such (test_neg fails)."""
    task = replace(TASK, isolation="boundary")

    result = _execute(task, plant(name, world), limits("bwrap"))
    neg = next(c.outcome for c in result.cases if c.nodeid.endswith("test_neg"))
    constants = 2 if name in SPECIAL_CASING else 0

    assert (result.passed, result.total, neg is Outcome.PASSED, len(MARKERS) > 0) == (
        constants,
        3,
        False,
        True,
    )
    assert sandbox_survivors() == []
