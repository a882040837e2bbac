"""Differential checks: a port against its reference, call by call, in sandboxed processes."""

from __future__ import annotations

import datetime as dt
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from harness.report.facts import attention
from harness.results import AttemptRecord, TaskResult, TaskStatus
from harness.store import RunParams, Store
from harness.tasks.load import load_tasks
from harness.tasks.spec import TaskSpec
from harness.testrun import DifferentialSettings, TestLimits, run_tests
from harness.testrun.launch import bwrap_works

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bwrap_works(), reason="the boundary needs bubblewrap"),
]

LIMITS = TestLimits(timeout_s=90, per_test_timeout_s=10, collect_timeout_s=20, sandbox="bwrap")
EXAMPLE = Path(__file__).resolve().parents[2] / "tasks" / "module_port_example"
SETTINGS = DifferentialSettings(examples=200, seconds=120, seed=20261127)

LEGACY = """
    def add(a: int, b: int) -> int:
        return a + b


    def clamp(x: int, lo: int, hi: int) -> int:
        if x < lo:
            return lo
        if x > hi:
            return hi
        return x
    """

TESTS = """
    from calc import add, clamp


    def test_add():
        assert add(2, 3) == 5
        assert add(-1, 1) == 0


    def test_clamp():
        assert clamp(5, 0, 10) == 5
        assert clamp(-5, 0, 10) == 0
        assert clamp(50, 0, 10) == 10
    """


def make_task(base: Path, legacy: str, tests: str = TESTS) -> TaskSpec:
    """A module_port task in `base`: legacy/calc.py, one test file, output out/calc.py."""
    (base / "legacy").mkdir(parents=True)
    (base / "acceptance").mkdir()
    (base / "legacy" / "calc.py").write_text(textwrap.dedent(legacy).lstrip())
    (base / "acceptance" / "test_calc.py").write_text(textwrap.dedent(tests).lstrip())
    (base / "tasks.yaml").write_text(
        "tasks:\n  - id: calc\n    type: module_port\n    reference: legacy/calc.py\n"
        "    tests: acceptance/test_calc.py\n    output: out/calc.py\n"
    )
    return load_tasks(base / "tasks.yaml")[0]


def test_an_honest_port_agrees_on_every_observed_and_200_generated_calls_each(
    tmp_path: Path,
) -> None:
    """A port written differently (a dict of bounds, min and max) but behaving the same
    agrees on the tests' calls and on at least 200 generated calls of each function."""
    task = make_task(tmp_path, LEGACY)
    port = """
        import operator


        def add(a: int, b: int) -> int:
            return operator.add(a, b)


        def clamp(x: int, lo: int, hi: int) -> int:
            return lo if x < lo else min(x, hi)
        """

    result = run_tests(task, textwrap.dedent(port), limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert result.all_passed and found is not None
    assert (found.differed, found.skipped, found.off, found.notes) == (0, 0, None, ())
    assert found.agreed >= 2 * 200 + 5  # generated calls of add and clamp, the tests' five


def test_the_examples_port_agrees_on_every_observed_call_and_200_generated_calls(
    tmp_path: Path,
) -> None:
    """The example's argparse port agrees with the optparse original on every call the tests
    made (28 distinct calls of parse_args) and on 200 generated calls of parse_args, errors
    compared by class (the task says `messages: false`: the libraries word them differently);
    build_parser returns a parser (a handle, no value) and is left out with that reason."""
    [task] = load_tasks(EXAMPLE / "tasks.yaml")
    code = (EXAMPLE / "_solutions" / "report_args.py").read_text()
    settings = DifferentialSettings(seed=SETTINGS.seed).over(task.differential)

    result = run_tests(task, code, limits=LIMITS, differential=settings)

    found = result.differential
    assert found is not None and result.all_passed and found.off is None
    assert (found.differed, found.differences) == (0, ())
    assert found.agreed >= 28 + 200  # parse_args: the tests' calls, then the generated ones
    assert found.skipped == 1 and found.notes == (
        "build_parser: a result crossed as a handle (no value to compare)",
    )


def test_a_candidate_special_casing_the_tests_is_caught_and_listed_for_a_human(
    tmp_path: Path,
) -> None:
    """A lookup table of the visible tests' answers passes them all; the generated calls
    catch it without any hidden test, and the summary lists it under "Needs a human"."""
    task = make_task(tmp_path, LEGACY)
    cheat = """
        def add(a, b):
            return {(2, 3): 5, (-1, 1): 0}.get((a, b), 0)


        def clamp(x, lo, hi):
            return {(5, 0, 10): 5, (-5, 0, 10): 0, (50, 0, 10): 10}.get((x, lo, hi), x)
        """

    result = run_tests(task, textwrap.dedent(cheat), limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert result.all_passed and found is not None and found.differed >= 2
    assert {d.call.split("(")[0] for d in found.differences} == {"add", "clamp"}
    record = AttemptRecord(n=1, kind="write", passed=2, total=2, differential=found)
    summary = TaskResult(
        "calc", TaskStatus.PASSED, passed=2, total=2, attempts=(record,), differential=found
    ).to_json()
    listed = [a for a in attention({"tasks": [summary]}) if a[0] == "differential"]
    assert len(listed) == 1 and "passes every test but" in listed[0][2]


def test_a_bug_no_test_reaches_is_shrunk_to_a_minimal_input(tmp_path: Path) -> None:
    """An off-by-one at the upper bound, which no visible test reaches, differs; hypothesis
    shrinks it to a small call that shows it, named in the difference."""
    task = make_task(tmp_path, LEGACY)
    buggy = textwrap.dedent(LEGACY).replace("if x > hi:", "if x > hi + 1:")

    result = run_tests(task, buggy, limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert result.all_passed and found is not None and found.differed == 1
    [difference] = found.differences
    assert difference.source == "generated"
    x, lo, hi = (int(n) for n in difference.call.removeprefix("clamp(")[:-1].split(", "))
    assert x == hi + 1 and x >= lo and max(abs(x), abs(lo), abs(hi)) <= 16  # shrunk small
    assert "returns" in difference.reference and difference.reference != difference.candidate


def test_a_reference_reading_the_clock_or_random_numbers_gives_no_false_difference(
    tmp_path: Path,
) -> None:
    """A reference that reads the clock or draws random numbers differs from itself: those
    calls (of functions, and of methods, run on two objects of the reference) are left out
    as non-deterministic, with the reason, never counted as differences."""
    legacy = """
        import random
        import time


        def stamp(x: int) -> str:
            return f"{x}@{time.time()}"


        def roll(n: int) -> int:
            return random.randint(0, 10**9) + n


        def double(x: int) -> int:
            return 2 * x


        class Dice:
            def __init__(self, sides: int = 6) -> None:
                self.sides = sides

            def throw(self, times: int) -> list[int]:
                return [random.randint(1, self.sides) for _ in range(times)]

            def when(self) -> float:
                return time.monotonic()
        """
    tests = """
        from calc import Dice, double, roll, stamp


        def test_all():
            assert stamp(1).startswith("1@")
            assert roll(3) >= 3
            assert double(4) == 8
            assert len(Dice(6).throw(3)) == 3
            assert Dice().when() > 0
        """
    task = make_task(tmp_path, legacy, tests)

    result = run_tests(task, textwrap.dedent(legacy), limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert result.all_passed and found is not None
    assert (found.differed, found.off) == (0, None)
    assert found.agreed >= 200 and found.skipped >= 2
    assert any(n.startswith("stamp: non-deterministic") for n in found.notes)
    assert any(n.startswith("roll: non-deterministic") for n in found.notes)
    assert any(n.startswith("throw: non-deterministic") for n in found.notes)
    assert any(n.startswith("when: non-deterministic") for n in found.notes)


def test_a_reference_that_does_not_import_turns_the_check_off_and_says_so(
    tmp_path: Path,
) -> None:
    """A reference that fails to import is no oracle: the check is off with the reason, and
    the tests' verdict stands alone."""
    task = make_task(tmp_path, "import not_a_module_anywhere\n")

    result = run_tests(task, textwrap.dedent(LEGACY), limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert result.all_passed and found is not None and found.differed == 0
    assert found.off is not None and "could not be imported" in found.off


def test_recorded_differential_results_survive_the_store(tmp_path: Path) -> None:
    """Replay and resume read the attempt back from the store: its differential result
    comes back whole, so nothing recorded is run again."""
    task = make_task(tmp_path, LEGACY)
    buggy = textwrap.dedent(LEGACY).replace("return a + b", "return a + b if a < 7 else a")
    result = run_tests(task, buggy, limits=LIMITS, differential=SETTINGS)
    assert result.differential is not None and result.differential.differed == 1
    record = AttemptRecord(
        n=1, kind="write", cost_usd=Decimal(0), passed=2, total=2, differential=result.differential
    )
    store = Store.open(tmp_path / "h.db")
    try:
        store.begin_run("r1", dt.datetime.now(dt.UTC), "sim", None, RunParams())
        store.record_attempt("r1", "calc", record, buggy, result)
        [stored] = store.load_attempts("r1", "calc")
    finally:
        store.close()

    assert stored.result is not None and stored.result.differential == result.differential
    assert stored.record.differential == result.differential


def test_a_candidate_answering_with_an_object_where_the_reference_gives_a_value_differs(
    tmp_path: Path,
) -> None:
    """An int subclass crosses as a handle: where the reference returns a plain value, that
    is a difference, never a call left out (no escaping the check by returning objects)."""
    task = make_task(tmp_path, LEGACY)
    shifty = textwrap.dedent(LEGACY).replace(
        "def add(a: int, b: int) -> int:\n    return a + b",
        "class Num(int):\n    pass\n\n\ndef add(a: int, b: int) -> int:\n    return Num(a + b)",
    )

    result = run_tests(task, shifty, limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert found is not None and found.differed >= 1
    assert any("not a value" in d.candidate for d in found.differences)
    assert not any(n.startswith("add: a result crossed as a handle") for n in found.notes)


COPY_BACK = """
    def push(stack: list[int], x: int) -> int:
        stack.append(x)
        return len(stack)


    def total(xs: list[int]) -> int:
        return sum(xs)
    """

COPY_BACK_TESTS = """
    from calc import push, total


    def test_push():
        assert push([1], 2) == 2


    def test_total():
        assert total([3, 1, 2]) == 6
    """


def test_the_arguments_a_call_changes_are_compared(tmp_path: Path) -> None:
    """The copy-back of a mutated argument is part of a call's outcome: a port that changes
    its arguments as the reference does agrees; one that forgets to append, or sorts the
    caller's list, passes the tests yet differs, the changed argument shown."""
    task = make_task(tmp_path, COPY_BACK, COPY_BACK_TESTS)
    honest = "def push(stack, x):\n    stack += [x]\n    return len(stack)\n\n\n"
    honest += "def total(xs):\n    return sum(sorted(xs))\n"
    careless = "def push(stack, x):\n    return len(stack) + 1\n\n\n"
    careless += "def total(xs):\n    xs.sort()\n    return sum(xs)\n"

    agreeing = run_tests(task, honest, limits=LIMITS, differential=SETTINGS).differential
    result = run_tests(task, careless, limits=LIMITS, differential=SETTINGS)

    assert agreeing is not None and (agreeing.differed, agreeing.skipped) == (0, 0)
    assert agreeing.agreed >= 2 * 200 + 2
    found = result.differential
    assert result.all_passed and found is not None
    observed = {d.call: d for d in found.differences if d.source == "observed"}
    assert observed["push([1], 2)"].reference == "returns `2` and changes argument 1 to `[1, 2]`"
    assert observed["push([1], 2)"].candidate == "returns `2`"
    assert observed["total([3, 1, 2])"].reference == "returns `6`"
    assert observed["total([3, 1, 2])"].candidate == (
        "returns `6` and changes argument 1 to `[1, 2, 3]`"
    )


METHODS = """
    class Counter:
        def __init__(self, start: int = 0) -> None:
            self.total = start

        def add(self, n: int) -> int:
            self.total += n
            return self.total

        def clamp_to(self, hi: int) -> int:
            if self.total > hi:
                self.total = hi
            return self.total
    """

METHODS_TESTS = """
    from calc import Counter


    def test_counter():
        c = Counter(1)
        assert c.add(2) == 3
        c.add(4)
        assert c.add(0) > 0
        assert Counter(5).clamp_to(9) == 5
    """


def test_an_honest_port_agrees_on_its_methods_observed_and_200_generated_calls_each(
    tmp_path: Path,
) -> None:
    """The calls the tests make on a candidate object's methods are replayed on an object of
    the reference's made by the same call, and each public method gets 200 generated calls
    on objects of its own: an honest port (other names inside) agrees on all of them."""
    task = make_task(tmp_path, METHODS, METHODS_TESTS)
    port = """
        class Counter:
            def __init__(self, start=0):
                self._n = start

            def add(self, n):
                self._n = self._n + n
                return self._n

            def clamp_to(self, hi):
                self._n = min(self._n, hi)
                return self._n
        """

    result = run_tests(task, textwrap.dedent(port), limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert result.all_passed and found is not None
    assert (found.differed, found.skipped, found.off, found.notes) == (0, 0, None, ())
    assert found.agreed >= 4 + 2 * 200  # add x3 and clamp_to observed; then 200 for each


def test_a_method_that_differs_on_a_later_call_is_shown_with_its_objects_history(
    tmp_path: Path,
) -> None:
    """A port whose add forgets the new total passes the tests (they assert only the first
    call and a sign); the tests' own calls replayed on the reference's object show it, the
    call shown after the object's making and the calls before it."""
    task = make_task(tmp_path, METHODS, METHODS_TESTS)
    forgetful = textwrap.dedent(METHODS).replace(
        "self.total += n\n        return self.total", "return self.total + n"
    )

    result = run_tests(task, forgetful, limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert result.all_passed and found is not None and found.differed >= 2
    observed = [d for d in found.differences if d.source == "observed"]
    assert [(d.call, d.reference, d.candidate) for d in observed] == [
        ("x = Counter(1); x.add(2); x.add(4)", "returns `7`", "returns `5`"),
        ("x = Counter(1); x.add(2); x.add(4); x.add(0)", "returns `7`", "returns `1`"),
    ]


def test_a_methods_bug_no_test_reaches_is_shrunk_to_a_minimal_call(tmp_path: Path) -> None:
    """An off-by-one in clamp_to, which no visible test reaches, is found by the generated
    calls on fresh objects and shrunk to a small object and call."""
    task = make_task(tmp_path, METHODS, METHODS_TESTS)
    buggy = textwrap.dedent(METHODS).replace("if self.total > hi:", "if self.total > hi + 1:")

    result = run_tests(task, buggy, limits=LIMITS, differential=SETTINGS)

    found = result.differential
    assert result.all_passed and found is not None and found.differed == 1
    [difference] = found.differences
    assert difference.source == "generated"
    made, call = difference.call.split("; ")
    start = int(made.removeprefix("x = Counter(").removesuffix(")") or 0)  # 0: the default
    hi = int(call.removeprefix("x.clamp_to(").removesuffix(")"))
    assert start == hi + 1 and max(abs(start), abs(hi)) <= 16


def test_only_lines_of_the_logs_own_shapes_are_read() -> None:
    """The call log is in a folder the candidate can write: a line of any other shape (an
    argument list that is not a list, a name that is not text, a `made` line without its
    call's number) is not read, so it cannot stop the check."""
    from harness.testrun.differential import _well_formed

    kept = [
        {"n": 1, "m": "calc", "f": "add", "a": [["i", 1]], "k": None},
        {"n": 2, "m": "calc", "c": "Counter", "a": [], "k": [["start", ["i", 1]]]},
        {"n": 3, "o": "0:7", "x": "add", "a": [["i", 2]], "k": None},
        {"made": "0:7", "by": 2},
    ]
    dropped = [
        {"n": 1, "m": "calc", "f": "add", "a": 5},
        {"n": 1, "m": "calc", "f": ["add"], "a": []},
        {"n": [1], "m": "calc", "f": "add", "a": []},
        {"n": 1, "o": {"x": 1}, "x": "add", "a": []},
        {"n": 1, "m": "calc", "f": "add", "a": [], "k": {"x": 1}},
        {"made": "0:7", "by": [2]},
        ["not", "a", "dict"],
    ]

    assert [e for e in kept + dropped if _well_formed(e)] == kept
