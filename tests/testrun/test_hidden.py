"""Hidden tests: loaded from the task list, run with the visible tests, scored apart, never
readable by the candidate, never shown to a model (checked at the fake provider servers)."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from harness.tasks import TaskListError, load_tasks
from harness.testrun import TestLimits, run_tests
from harness.testrun.run import _execute
from tests.conftest import write
from tests.e2e.test_providers_wire import (  # noqa: F401  (fixtures)
    CONFIG,
    MID,
    restore_logging,
    run_live,
    servers,
)
from tests.fakeserver import anthropic_sse, gemini_reply

MARKER = "HIDDEN-MARKER-7f3a"
HIDDEN = f"""
    # {MARKER}: nothing in this file may ever reach a model.
    from calc_service import sub

    def test_sub_below_zero():
        assert sub(2, 5) == -3
    """
CLAMPED = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return max(a - b, 0)\n"
FAST = TestLimits(timeout_s=60, per_test_timeout_s=10, collect_timeout_s=30)


@pytest.fixture
def tasks_yaml(task_dir: Path) -> Path:
    """conftest's calc task, with one hidden test file beside the visible ones."""
    write(task_dir / "hidden" / "test_calc_hidden.py", HIDDEN)
    write(task_dir / "harness.yaml", CONFIG)
    return write(
        task_dir / "tasks.yaml",
        """
        tasks:
          - id: calc
            reference: legacy/calc.py
            tests: acceptance/test_calc.py
            hidden_tests: hidden/test_calc_hidden.py
            output: out/calc_service.py
            max_attempts: 2
        """,
    )


def test_hidden_tests_load_as_their_own_field(tasks_yaml: Path) -> None:
    """hidden_tests resolves like tests, stays apart from them, and must exist."""
    (spec,) = load_tasks(tasks_yaml)
    tasks_yaml.write_text(tasks_yaml.read_text().replace("test_calc_hidden", "test_missing"))

    with pytest.raises(TaskListError, match=r"hidden_tests.*does not exist"):
        load_tasks(tasks_yaml)
    assert [p.name for p in spec.tests] == ["test_calc.py"]
    assert [p.name for p in spec.hidden_tests] == ["test_calc_hidden.py"]


def test_hidden_cases_are_scored_apart_and_never_fed_back(tasks_yaml: Path) -> None:
    """They count towards passing, are tallied on their own, and stay out of failing()."""
    (spec,) = load_tasks(tasks_yaml)
    result = run_tests(spec, CLAMPED, limits=FAST)

    assert (result.passed, result.total, result.all_passed) == (4, 5, False)
    assert (result.visible_passed, result.visible_total) == (4, 4)
    assert (result.hidden_passed, result.hidden_total) == (0, 1)
    assert result.failing() == ()


def test_the_candidate_cannot_read_the_hidden_tests(tasks_yaml: Path) -> None:
    """Opening them (by their scratch path or their original one) is refused, and tampering."""
    (spec,) = load_tasks(tasks_yaml)
    peek = textwrap.dedent(
        f"""
        import glob

        SEEN = []
        for path in [*glob.glob("hidden/*.py"), {str(spec.hidden_tests[0])!r}]:
            try:
                SEEN.append(open(path).read())
            except OSError:
                pass
        """
    )
    for kind in ("bwrap", "none"):
        limits = TestLimits(timeout_s=60, per_test_timeout_s=10, collect_timeout_s=30, sandbox=kind)
        result = _execute(replace(spec, isolation="in_process"), peek + CLAMPED, limits)

        assert (result.tampered, result.passed) == (True, 0)
        assert MARKER not in result.output


def test_behind_the_boundary_the_hidden_tests_are_not_there_to_read(tasks_yaml: Path) -> None:
    """isolation: boundary (the default): the same reads find no file; nothing to detect, the
    candidate scores what it earns (visible 4/4, hidden 0/1), and no hidden text leaks."""
    (spec,) = load_tasks(tasks_yaml)
    peek = f"SEEN = []\nfor p in ['hidden/test_calc_hidden.py', {str(spec.hidden_tests[0])!r}]:\n"
    peek += "    try:\n        SEEN.append(open(p).read())\n    except OSError:\n        pass\n"
    limits = TestLimits(timeout_s=60, per_test_timeout_s=10, collect_timeout_s=30, sandbox="bwrap")

    result = _execute(spec, peek + CLAMPED + "\n\ndef seen():\n    return SEEN\n", limits)

    assert (spec.isolation, result.tampered, result.visible_passed, result.hidden_passed) == (
        "boundary",
        False,
        4,
        0,
    )
    assert MARKER not in result.output


THREAD_PEEK = """
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    SEEN = []
    with ThreadPoolExecutor(1) as pool:  # the worker's stack is library code alone
        try:
            SEEN.append(pool.submit(Path("hidden/test_calc_hidden.py").read_text).result())
        except OSError:
            pass
    """
SWAP = """
    import importlib.abc
    import importlib.machinery
    import importlib.util
    import sys

    def _passes():
        pass

    class _Loader(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):  # the same test names, all passing
            module.test_sub_below_zero = _passes

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            real = importlib.machinery.PathFinder.find_spec(name, path)
            if not name.startswith("test_") or real is None:
                return None
            spec = importlib.util.spec_from_loader(name, _Loader(), origin=real.origin)
            spec.has_location = True  # so the module gets the test file's __file__
            return spec

    sys.meta_path.insert(0, _Finder())
    """


@pytest.mark.parametrize("attack", [THREAD_PEEK, SWAP], ids=["thread_peek", "meta_path_swap"])
@pytest.mark.parametrize("kind", ["bwrap", "none"])
def test_hidden_tests_can_be_neither_read_by_a_worker_nor_swapped(
    tasks_yaml: Path, attack: str, kind: str
) -> None:
    """A worker thread running library code alone is the candidate's too, and a test module
    answered for by the candidate's import hook is no test file's: both are tampering."""
    (spec,) = load_tasks(tasks_yaml)
    spec = replace(spec, isolation="in_process")  # the in-process detection layer's test
    limits = TestLimits(timeout_s=60, per_test_timeout_s=10, collect_timeout_s=30, sandbox=kind)
    result = _execute(spec, textwrap.dedent(attack) + CLAMPED, limits)

    assert (result.tampered, result.passed, result.hidden_passed) == (True, 0, 0)
    assert MARKER not in result.output


def test_hidden_content_never_reaches_a_provider(servers, tasks_yaml: Path) -> None:  # noqa: F811
    """Write and review requests carry none of it (and no fix is bought: only hidden tests
    fail); the summary scores it apart and flags the hidden tests trailing the visible ones."""
    anthropic, gemini = servers
    reply = f"Here is the port.\n\n```python\n{CLAMPED}```\n"
    anthropic.script(anthropic_sse(reply, model=MID), anthropic_sse(reply, model=MID))
    gemini.script(gemini_reply("CLEAN"))

    code, summary, _events = run_live(tasks_yaml)

    bodies = [json.dumps(r.json) for r in (*anthropic.requests, *gemini.requests)]
    task = summary["tasks"][0]
    assert (code, task["status"], len(anthropic.requests)) == (1, "partial", 1)
    assert [b for b in bodies if MARKER in b or "below_zero" in b or "hidden" in b] == []
    assert (task["visible"], task["hidden"]) == (
        {"passed": 4, "total": 4},
        {"passed": 0, "total": 1},
    )
    run = (tasks_yaml.parent / "runs" / "latest").resolve()
    for name in ("summary.md", "summary.html"):
        text = (run / name).read_text()
        assert "4/5 (hidden 0/1)" in text and "hidden tests trail the visible ones" in text
