"""Tests for harness.testrun.collectable: tests collected against a stub candidate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.tasks.spec import TaskSpec
from harness.testrun import TestLimits, collection_problems, problems_text, run_tests
from harness.testrun.collectable import Uncollectable
from harness.testrun.launch import bwrap_works
from harness.testrun.stub import stub_module

LIMITS = TestLimits(timeout_s=60, sandbox="none")


def _task(
    tmp_path: Path, test: str, output: str = "gcd.py", isolation: str = "in_process"
) -> TaskSpec:
    (tmp_path / "acceptance").mkdir(exist_ok=True)
    (tmp_path / "acceptance" / "test_it.py").write_text(test)
    return TaskSpec(
        "t",
        tmp_path,
        (),
        (tmp_path / "acceptance" / "test_it.py",),
        tmp_path / "out" / output,
        support=(tmp_path / "data",),
        isolation=isolation,
        source=tmp_path / "tasks.yaml",
        line=3,
    )


def test_the_stub_defines_each_name_with_its_own_name() -> None:
    """Functions carry their names and raise NotImplementedError; classes can be raised and
    subclassed; constants are inert; any other name is a function of that name."""
    namespace: dict[str, object] = {}
    exec(stub_module(["gcd", "InvalidQuantity", "MAX_QTY"]), namespace)
    gcd, error = namespace["gcd"], namespace["InvalidQuantity"]
    with pytest.raises(NotImplementedError):
        gcd(4, 6)  # type: ignore[operator]

    class Mine(error):  # type: ignore[misc, valid-type]
        pass

    assert (gcd.__name__, error.__name__, issubclass(Mine, Exception)) == (  # type: ignore[attr-defined]
        "gcd",
        "InvalidQuantity",
        True,
    )
    assert (list(namespace["MAX_QTY"]), namespace["__getattr__"]("lcm").__name__) == ([], "lcm")  # type: ignore[call-overload, operator]


QUIXBUGS_STYLE = (
    "import json\nfrom pathlib import Path\n\nimport pytest\n\nfrom gcd import gcd\n\n"
    "CASES = json.loads((Path(__file__).parents[1] / 'data' / f'{gcd.__name__}.json')"
    ".read_text())\n\n\n@pytest.mark.parametrize('a,b,want', CASES)\n"
    "def test_gcd(a, b, want):\n    assert gcd(a, b) == want\n"
)


def test_a_suite_reading_its_data_by_the_functions_name_collects(tmp_path: Path) -> None:
    """QuixBugs' suites load their cases by `gcd.__name__` at collection: against the stub
    they collect, so the task is not refused."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "gcd.json").write_text("[[4, 6, 2], [9, 3, 3]]")

    assert collection_problems(_task(tmp_path, QUIXBUGS_STYLE), LIMITS) == []


@pytest.mark.skipif(not bwrap_works(), reason="the boundary needs bubblewrap")
def test_behind_the_boundary_a_suite_reading_the_functions_name_collects_and_runs(
    tmp_path: Path,
) -> None:
    """The same QuixBugs shape in the default isolation: the stub collects behind the
    boundary (a function crosses with its name), and so does the night's pristine
    collection: the honest candidate's run expects and passes both tests."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "gcd.json").write_text("[[4, 6, 2], [9, 3, 3]]")
    task = _task(tmp_path, QUIXBUGS_STYLE, isolation="boundary")
    honest = "def gcd(a, b):\n    return a if b == 0 else gcd(b, a % b)\n"

    limits = TestLimits(timeout_s=120, sandbox="bwrap")

    result = run_tests(task, honest, limits=limits)

    assert (collection_problems(task, limits), result.passed, result.total) == ([], 2, 2)


def test_a_missing_data_file_is_named_with_its_line_and_cause(tmp_path: Path) -> None:
    """The same suite without its data file: the test file, the line and the error."""
    (tmp_path / "data").mkdir()
    task = _task(tmp_path, QUIXBUGS_STYLE)

    [problem] = collection_problems(task, LIMITS)

    assert (problem.path, problem.line) == ("acceptance/test_it.py", 8)
    assert problem.cause.startswith("FileNotFoundError: [Errno 2] No such file or directory")
    assert problems_text(task, [problem])[0].startswith(
        f"{tmp_path / 'tasks.yaml'}:3: task t: acceptance/test_it.py:8: cannot be collected: "
    )


def test_a_syntax_error_in_a_test_file_is_named_with_its_line(tmp_path: Path) -> None:
    """A test file that does not parse is refused at the line Python names."""
    (tmp_path / "data").mkdir()
    task = _task(tmp_path, "from gcd import gcd\n\n\ndef test_a(:\n    pass\n")

    [problem] = collection_problems(task, LIMITS)

    assert (problem.path, problem.line, problem.cause.startswith("SyntaxError")) == (
        "acceptance/test_it.py",
        4,
        True,
    )


def test_a_suite_calling_the_candidate_while_collected_is_not_refused(tmp_path: Path) -> None:
    """A failure raised inside the stub (cases built by calling the candidate) says nothing
    about the tests: no problem is reported, the night decides."""
    (tmp_path / "data").mkdir()
    test = "from gcd import gcd\n\nCASES = [gcd(4, 6)]\n\n\ndef test_a():\n    assert CASES\n"

    assert collection_problems(_task(tmp_path, test), LIMITS) == []


def test_a_foreign_task_is_not_collected(tmp_path: Path) -> None:
    """A task with its own test command has no pytest collection to ask."""
    task = TaskSpec("g", tmp_path, (), (), tmp_path / "x.go", language="go")

    assert collection_problems(task, LIMITS) == []


def test_a_problem_reads_as_file_line_and_cause() -> None:
    """The one-line form names the file, its line when known, and the cause."""
    shown = [
        str(Uncollectable("a/test_x.py", 3, "E")),
        str(Uncollectable("a/test_x.py", None, "E")),
    ]

    assert shown == ["a/test_x.py:3: cannot be collected: E", "a/test_x.py: cannot be collected: E"]


def test_the_stub_has_the_references_names_as_the_reference_makes_them() -> None:
    """A package's `from .module import *` brings the module's names: the stub defines every
    top-level name of a Python reference (a private one too), each as the reference makes it,
    and its __all__."""
    from harness.testrun.stub import reference_names

    reference = (
        "__all__ = ['peekable', 'Window']\n\n"
        "def peekable(it):\n    return it\n\n\n"
        "class Window:\n    pass\n\n\n"
        "limit = 3\n_private = 1\n"
    )
    namespace: dict = {}
    exec(stub_module([], reference_names(reference)), namespace)

    assert (
        callable(namespace["peekable"]),
        isinstance(namespace["Window"], type),
        type(namespace["limit"]).__name__,
        type(namespace["_private"]).__name__,
        sorted(namespace["__all__"]),
    ) == (True, True, "_Inert", "_Inert", ["Window", "peekable"])


def test_a_private_table_the_tests_iterate_at_collection_is_a_value_as_in_the_reference() -> None:
    """six's suite parametrizes over `six._moved_attributes`: a private name the reference
    makes a value is an inert value in the stub (iterated, it is empty), not a function."""
    from harness.testrun.stub import reference_names

    reference = "class Moved:\n    pass\n\n\n_moved = [Moved()]\n\n\ndef _helper():\n    pass\n"
    namespace: dict = {}
    exec(stub_module(["_moved", "_helper"], reference_names(reference)), namespace)

    assert (list(namespace["_moved"]), callable(namespace["_helper"])) == ([], True)


CONSTANTS_AT_COLLECTION = (
    "from datetime import datetime\n\nimport pytest\n\nfrom clock import DATE, TIME, UTC\n\n"
    "CASES = [(datetime(2020, 1, 2, tzinfo=UTC), DATE + 'T' + TIME)]\n\n\n"
    "@pytest.mark.parametrize('when,fmt', CASES)\ndef test_it(when, fmt):\n    assert fmt\n"
)
CLOCK = "from datetime import timezone\n\nUTC = timezone.utc\nDATE = '%Y-%m-%d'\nTIME = '%H:%M'\n"


def _with_reference(tmp_path: Path, test: str) -> TaskSpec:
    task = _task(tmp_path, test, output="clock.py")
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "clock.py").write_text(CLOCK)
    return replace(task, reference=(tmp_path / "reference" / "clock.py",))


def test_a_suite_computing_with_the_candidates_values_collects_against_the_reference(
    tmp_path: Path,
) -> None:
    """isodate's shape: the tests build a datetime with the module's tzinfo and add its
    format strings at collection. The stub has no such values, the reference does: the
    file collects against the reference, so the task is not refused."""
    (tmp_path / "data").mkdir()
    task = _with_reference(tmp_path, CONSTANTS_AT_COLLECTION)

    assert collection_problems(task, LIMITS) == []


def test_without_a_reference_the_same_suite_is_refused_naming_the_line(tmp_path: Path) -> None:
    """With no reference to collect against, the stub's failure is all there is to go on:
    the file is named with its line."""
    (tmp_path / "data").mkdir()
    task = _task(tmp_path, CONSTANTS_AT_COLLECTION, output="clock.py")

    [problem] = collection_problems(task, LIMITS)

    assert (problem.path, problem.line) == ("acceptance/test_it.py", 7)


def test_a_file_that_fails_against_the_reference_too_is_still_refused(tmp_path: Path) -> None:
    """The reference does not excuse the tests' own failure: a missing data file is named
    whether or not the module under test is the stub."""
    (tmp_path / "data").mkdir()
    test = CONSTANTS_AT_COLLECTION + "\nDATA = open('data/missing.json').read()\n"
    task = _with_reference(tmp_path, test)

    [problem] = collection_problems(task, LIMITS)

    assert problem.cause.startswith("FileNotFoundError")
