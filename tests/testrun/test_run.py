"""Tests of harness.testrun: running a candidate's acceptance tests in the sandbox."""

from __future__ import annotations

import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from harness.results import Outcome
from harness.tasks.spec import TaskSpec
from harness.testrun import SandboxError, TestLimits, run_tests, sandbox_kind
from harness.testrun.imports import imported_modules
from tests import _quixbugs as quixbugs

FAST = TestLimits(timeout_s=30, per_test_timeout_s=5, collect_timeout_s=15)
ADD = "def add(a, b):\n    return a + b\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
GOOD = ADD + MUL
TESTS = """
    from calc import add, mul

    def test_add():
        assert add(2, 2) == 4

    def test_mul():
        assert mul(3, 4) == 12

    def test_neg():
        assert add(-1, -1) == -2
    """


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def make_task(
    base: Path, tests: str = TESTS, output: str = "out/calc.py", support: tuple[Path, ...] = ()
) -> TaskSpec:
    """A task in `base` with one acceptance test file."""
    test_file = write(base / "acceptance" / "test_calc.py", tests)
    return TaskSpec(
        id="calc",
        base_dir=base,
        reference=(),
        tests=(test_file,),
        output=base / output,
        support=support,
        isolation="in_process",  # this file tests the in-process layers
    )


@pytest.fixture
def task(tmp_path: Path) -> TaskSpec:
    return make_task(tmp_path)


def outcomes(result) -> dict[str, Outcome]:
    return {c.nodeid.split("::")[-1]: c.outcome for c in result.cases}


def test_good_candidate_passes_every_test(task: TaskSpec) -> None:
    """An honest, correct candidate passes all expected tests."""
    result = run_tests(task, GOOD, limits=FAST)

    assert (result.passed, result.total, result.error, result.tampered) == (3, 3, None, False)


def test_failure_carries_assertion_message_and_short_details(task: TaskSpec) -> None:
    """A failing test reports the assertion line and a traceback through the candidate."""
    result = run_tests(task, GOOD.replace("a * b", "a + b"), limits=FAST)
    failed = next(c for c in result.cases if c.outcome is Outcome.FAILED)

    assert (failed.nodeid, failed.message) == (
        "acceptance/test_calc.py::test_mul",
        "AssertionError: assert 7 == 12",
    )
    assert "acceptance/test_calc.py:7: in test_mul" in failed.details
    assert "/tmp/harness-test" not in failed.details + result.output


def test_details_are_capped(task: TaskSpec) -> None:
    """Details stay short enough for a fix prompt however deep the traceback."""
    deep = "def add(a, b, n=300):\n    return add(a, b, n - 1) if n else 1 / 0\n" + MUL
    result = run_tests(task, deep, limits=FAST)

    assert max(len(c.details.splitlines()) for c in result.cases) <= 60


def test_import_error_is_an_error_for_every_test_with_its_message(task: TaskSpec) -> None:
    """A candidate that cannot be imported errors every test, saying why."""
    result = run_tests(task, ADD, limits=FAST)

    assert result.errors == 3
    assert result.cases[0].message.startswith("collection error: ImportError: cannot import")
    assert "site-packages" not in result.cases[0].details


def test_syntax_error_is_reported_not_raised(task: TaskSpec) -> None:
    """Code that does not compile is a test error, not an exception."""
    result = run_tests(task, "def add(a, b)\n    return a\n", limits=FAST)

    assert (result.errors, "SyntaxError" in result.cases[0].message) == (3, True)


def test_skip_is_not_a_pass(tmp_path: Path) -> None:
    """Skipped and xfailed tests never count as passed; the suite's own are left out of total."""
    tests = TESTS + "\n    import pytest\n\n    @pytest.mark.xfail\n    def test_x():\n"
    tests += "        assert add(1, 1) == 3\n\n    def test_s():\n        pytest.skip('no')\n"
    result = run_tests(make_task(tmp_path, tests), GOOD, limits=FAST)

    assert (result.passed, result.skipped, result.total, result.all_passed) == (3, 2, 3, True)


def _knapsack(tmp_path: Path, tests: str = quixbugs.TESTS) -> TaskSpec:
    quixbugs.quixbugs(tmp_path, tests)
    return TaskSpec(
        id="knapsack",
        base_dir=tmp_path,
        reference=(),
        tests=(tmp_path / "python_testcases" / "test_knapsack.py",),
        output=tmp_path / "fixed" / "knapsack.py",
        support=(tmp_path / "conftest.py",),
        isolation="in_process",
    )


def test_a_test_the_suite_skips_is_skipped_not_failed(tmp_path: Path) -> None:
    """QuixBugs' conftest skips slow tests without --runslow: the correct program passes."""
    result = run_tests(_knapsack(tmp_path), quixbugs.CORRECT, limits=FAST)
    (slow,) = [c for c in result.cases if c.outcome is Outcome.SKIPPED]

    assert (result.passed, result.failed, result.skipped, result.total, result.all_passed) == (
        3,
        0,
        1,
        3,
        True,
    )
    assert (slow.nodeid, slow.by_suite, slow.message, result.failing()) == (
        "python_testcases/test_knapsack.py::test_knapsack_big",
        True,
        "Skipped: need --runslow option to run",
        (),
    )


def test_the_suite_is_asked_about_a_skip_once_per_inputs(tmp_path: Path) -> None:
    """The stub run that tells a suite's skip from a candidate's runs once, then is reused."""
    task = _knapsack(tmp_path, quixbugs.TESTS + "\n\ndef test_once():\n    pass\n")
    with capture_logs() as logs:
        first = run_tests(task, quixbugs.CORRECT, limits=FAST)
        second = run_tests(task, quixbugs.BUGGY, limits=FAST)

    checked = [e["by_suite"] for e in logs if e["event"] == "suite_skips_checked"]

    assert (checked, first.skipped, second.skipped) == (
        [["python_testcases/test_knapsack.py::test_knapsack_big"]],
        1,
        1,
    )


CANDIDATE_SKIP = (
    quixbugs.TESTS
    + """

def test_knapsack_empty():
    answer = knapsack(10, [])
    if answer is None:
        pytest.skip("knapsack returned None")
    assert answer == 0
"""
)


def test_a_skip_only_the_candidate_causes_counts_against_it(tmp_path: Path) -> None:
    """A test skipped because of what the candidate did is a failure, fed to the fix prompt."""
    code = quixbugs.CORRECT.replace(
        "def knapsack(capacity, items):",
        "def knapsack(capacity, items):\n    if not items:\n        return None",
    )
    result = run_tests(_knapsack(tmp_path, CANDIDATE_SKIP), code, limits=FAST)
    skips = {
        c.nodeid.split("::")[-1]: c.by_suite for c in result.cases if c.outcome is Outcome.SKIPPED
    }

    assert (result.passed, result.failed, result.skipped, result.total, result.all_passed) == (
        3,
        1,
        1,
        4,
        False,
    )
    assert (skips, [c.nodeid.split("::")[-1] for c in result.failing()]) == (
        {"test_knapsack_big": True, "test_knapsack_empty": False},
        ["test_knapsack_empty"],
    )


def test_tests_needing_the_real_candidate_to_collect_still_count(tmp_path: Path) -> None:
    """A test file that cannot be collected against the stub is judged from the run itself."""
    tests = "from calc import add, mul\n\nTWO = add(1, 1) + 0\n\n\ndef test_two():\n"
    result = run_tests(make_task(tmp_path, tests + "    assert TWO == 2\n"), GOOD, limits=FAST)

    assert (result.passed, result.total, result.tampered) == (1, 1, False)
    assert "stub" in result.warnings[-1]


STYLES = """
    import os
    import unittest
    from unittest import mock

    import pytest
    from calc import add, mul

    class TestCalc:
        def setup_method(self):
            self.base = 1

        def test_add(self):
            assert add(self.base, 1) == 2

        @pytest.mark.parametrize("x", [1, 2])
        def test_mul(self, x):
            assert mul(x, 1) == x

    class TestUnit(unittest.TestCase):
        def test_add(self):
            self.assertEqual(add(2, 2), 4)

    @pytest.fixture
    def three():
        yield 3

    def test_fixture(three, tmp_path, monkeypatch, capsys):
        monkeypatch.setenv("X", "1")
        (tmp_path / "f").write_text("x")
        print("hello")
        assert add(three, 0) == 3 and capsys.readouterr().out == "hello\\n"

    @mock.patch("os.getcwd", return_value="/x")
    def test_patched(getcwd):
        assert add(1, 1) == 2 and os.getcwd() == "/x"
    """


def test_class_unittest_and_fixture_tests_are_not_mistaken_for_tampering(tmp_path: Path) -> None:
    """Methods rebound per test, unittest cases, builtin fixtures and tests wrapped by a
    library's decorator (mock.patch) all run as usual."""
    result = run_tests(make_task(tmp_path, STYLES), GOOD, limits=FAST)

    assert (result.passed, result.total, result.tampered) == (6, 6, False)


HYPOTHESIS_TESTS = """
    from hypothesis import given, strategies as st
    from calc import add, mul

    @st.composite
    def pairs(draw):
        return draw(st.integers(-9, 9)), draw(st.integers(-9, 9))

    @given(pairs())
    def test_add(pair):
        assert add(*pair) == pair[0] + pair[1]

    @given(st.integers(0, 9), st.slices(4))
    def test_mul(n, cut):
        assert mul(n, 1) == n and cut.step != 0
    """


def test_property_based_tests_are_never_trusted(tmp_path: Path) -> None:
    """Hypothesis's settings are the candidate's to change (one example, no shrinking), so
    its strategies are never adopted as library code: even a right candidate scores nothing,
    as task validation warns before any call."""
    result = run_tests(make_task(tmp_path, HYPOTHESIS_TESTS), GOOD, limits=FAST)

    assert (result.passed, result.tampered) == (0, True)
    assert "hypothesis." in result.error and "is the candidate's" in result.error


SUPPORT_NAMESAKE_TESTS = """
    import statistics  # noqa: F401  (statistics imports fractions)
    from fractions import MARKER

    from calc import add

    def test_add():
        assert (MARKER, add(1, 2)) == ("beside the tests", 3)
    """


def test_a_support_module_beside_the_tests_named_like_a_library_is_what_they_import(
    tmp_path: Path,
) -> None:
    """A support module beside the tests, named like a library the tests' libraries import
    (statistics imports fractions), is what the tests import, not that library."""
    beside = write(tmp_path / "acceptance" / "fractions.py", "MARKER = 'beside the tests'")
    task = make_task(tmp_path, SUPPORT_NAMESAKE_TESTS, support=(beside,))
    result = run_tests(task, GOOD, limits=FAST)

    assert (result.passed, result.total, result.tampered) == (1, 1, False), result.error


def test_hanging_test_times_out_alone(task: TaskSpec) -> None:
    """A test that hangs fails with a timeout; the other tests are still judged."""
    code = GOOD.replace("return a + b", "while a < 0:\n        pass\n    return a + b")
    limits = TestLimits(timeout_s=60, per_test_timeout_s=5, collect_timeout_s=15)
    result = run_tests(task, code, limits=limits)

    assert outcomes(result) == {
        "test_add": Outcome.PASSED,
        "test_mul": Outcome.PASSED,
        "test_neg": Outcome.FAILED,
    }
    assert "Timeout" in result.cases[2].message and result.timed_out is False


def test_whole_run_timeout_is_an_error_result(task: TaskSpec) -> None:
    """Hitting the wall-clock limit errors the unconfirmed tests and sets timed_out: the run
    is cut at its limit, not when the hanging test would end. (The limit leaves a loaded
    machine ample time for the first test; the hang outlasts every limit by far.)"""
    code = GOOD.replace("return a * b", "import time\n    time.sleep(3600)")
    limits = TestLimits(timeout_s=30, per_test_timeout_s=1800, collect_timeout_s=25)
    result = run_tests(task, code, limits=limits)

    assert (result.timed_out, result.passed, result.errors) == (True, 1, 2)
    assert result.error.startswith("timeout") and result.duration_s < 1800


def test_precheck_rejection_never_runs(task: TaskSpec, tmp_path: Path) -> None:
    """A candidate the pre-check rejects errors every test, is not executed, and says so."""
    marker = tmp_path / "ran"
    code = f"import gc\nopen({str(marker)!r}, 'w').close()\n" + GOOD
    result = run_tests(task, code, limits=TestLimits(sandbox="none"))

    assert (result.errors, marker.exists(), result.rejected) == (3, False, True)
    assert result.error.startswith("precheck: line 1: imports gc")


def test_precheck_extra_reasons_reject_too(task: TaskSpec) -> None:
    """Reasons from the operator's policy callable reject the candidate like built-in ones."""
    result = run_tests(task, GOOD, limits=FAST, precheck_extra=lambda code: ["uses requests"])

    assert (result.errors, result.error) == (3, "precheck: uses requests")


def test_environment_is_scrubbed(task: TaskSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, token or secret of the harness reaches the candidate's environment."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-envleak-0123456789")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-test-envleak-0123456789")
    code = "import os\nENV = sorted(os.environ)\n\n\ndef add(a, b):\n    raise ValueError(ENV)\n"
    result = run_tests(task, code + MUL, limits=FAST)
    text = result.cases[0].message + result.output

    assert "ANTHROPIC_API_KEY" not in text and "MY_SERVICE_TOKEN" not in text and "PATH" in text


def test_support_files_and_module_path_imports(tmp_path: Path) -> None:
    """Support conftest and data are in place; the candidate imports by module path too."""
    tests = """
        import json, pathlib
        from out.calc import add

        def test_data(factor):
            data = json.loads(pathlib.Path("fixtures/data.json").read_text())
            assert add(data["a"], factor) == 5
        """
    write(tmp_path / "fixtures" / "data.json", '{"a": 3}')
    write(tmp_path / "fixtures" / "deeper" / "more.txt", "x")
    conftest = "import pytest\n\n@pytest.fixture\ndef factor():\n    return 2\n"
    support = (tmp_path / "fixtures", write(tmp_path / "acceptance" / "conftest.py", conftest))
    task = make_task(tmp_path, tests, support=support)
    result = run_tests(task, GOOD, limits=FAST)

    assert (result.passed, result.total) == (1, 1)


def test_leaked_secret_values_are_redacted(task: TaskSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret value of the harness never comes back in output or messages, however it leaked."""
    secret = "sk-test-redact-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    code = f"print({secret!r})\n\n\ndef add(a, b):\n    assert {secret!r} == 1\n" + MUL
    result = run_tests(task, code, limits=FAST)
    text = result.output + "".join(c.message + c.details for c in result.cases)

    assert (secret in text, "[REDACTED]" in text) == (False, True)


@pytest.mark.parametrize(
    "output",
    [
        "conftest.py",
        "pytest.py",
        "acceptance/test_calc.py",
        "out/pytest.ini",
        "../calc.py",
        "json.py",
    ],
)
def test_unusable_output_paths_are_refused(tmp_path: Path, output: str) -> None:
    """A candidate path that would shadow pytest, a test or the stdlib is a setup error."""
    task = make_task(tmp_path, output=output)

    with pytest.raises(SandboxError, match="not usable"):
        run_tests(task, GOOD, limits=FAST)


def test_expected_ids_are_collected_once_per_task(tmp_path: Path) -> None:
    """The pristine collection runs once; later runs of the same inputs reuse it."""
    task = make_task(tmp_path, TESTS + "\n    def test_once():\n        pass\n")
    with capture_logs() as logs:
        run_tests(task, GOOD, limits=FAST)
        run_tests(task, GOOD, limits=FAST)

    assert [e["event"] for e in logs].count("expected_tests_collected") == 1


def test_run_is_logged_with_counts(task: TaskSpec) -> None:
    """Each run logs one tests_ran event with its counts."""
    with capture_logs() as logs:
        run_tests(task, GOOD, limits=FAST)
    ran = [e for e in logs if e["event"] == "tests_ran"]

    assert (len(ran), ran[0]["passed"], ran[0]["total"]) == (1, 3, 3)


def test_fallback_sandbox_warns(task: TaskSpec) -> None:
    """Without bubblewrap the result carries a warning for the summary."""
    result = run_tests(task, GOOD, limits=TestLimits(sandbox="none"))

    assert (result.passed, sandbox_kind(TestLimits(sandbox="none"))) == (3, "rlimits")
    assert "bubblewrap" in result.warnings[0]


def test_concurrent_runs_do_not_interfere(task: TaskSpec) -> None:
    """Runs from several threads at once (the runner's pool) keep their own results."""
    codes = [GOOD, GOOD.replace("a * b", "a + b"), GOOD, ADD]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda code: run_tests(task, code, limits=FAST), codes))

    assert [(r.passed, r.failed, r.errors) for r in results] == [
        (3, 0, 0),
        (2, 1, 0),
        (3, 0, 0),
        (0, 0, 3),
    ]


def test_limits_are_validated() -> None:
    """Nonsense limits are refused when they are built."""
    with pytest.raises(ValueError):
        TestLimits(sandbox="docker")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        TestLimits(timeout_s=0)


def test_every_command_passes_the_command_guard_first(task: TaskSpec) -> None:
    """The operator's command policy sees each sandbox command line before it starts."""
    seen: list[list[str]] = []

    result = run_tests(task, GOOD, limits=FAST, command_guard=lambda argv: seen.append(list(argv)))

    assert result.passed == 3
    assert seen and all(any("boot.py" in part for part in argv) for argv in seen)


def test_a_refused_command_is_never_started(tmp_path: Path) -> None:
    """A guard that refuses stops the run before any process starts; the refusal propagates."""
    from harness.guardrails import GuardrailError, Violation

    task = make_task(tmp_path, tests=TESTS.replace("test_neg", "test_neg_guarded"))

    def refuse(argv) -> None:
        raise GuardrailError(Violation("forbidden-command", " ".join(argv)[:40]))

    with pytest.raises(GuardrailError):
        run_tests(task, GOOD, limits=FAST, command_guard=refuse)


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 0, -1.0])
def test_limits_must_be_finite_and_positive(value: float) -> None:
    """An infinite, NaN, zero or negative clock is refused when the limits are made."""
    with pytest.raises(ValueError, match="finite, positive"):
        TestLimits(timeout_s=value)


def test_an_infinite_timeout_in_the_config_exits_2(tmp_path: Path) -> None:
    """tests.timeout_s: .inf is bad input at start-up: exit 2, nothing ran (issue 11)."""
    from harness.cli import main

    example = Path(__file__).resolve().parents[2] / "tasks" / "example" / "tasks.yaml"
    config = tmp_path / "harness.yaml"
    config.write_text("tests:\n  timeout_s: .inf\n")
    runs = tmp_path / "runs"
    argv = ["run", str(example), "--provider", "sim", "--run-dir", str(runs)]

    assert main([*argv, "--config", str(config)]) == 2
    assert not (runs / "latest").exists()


def test_the_modules_a_suite_imports_by_absolute_name_are_listed_once() -> None:
    """Absolute imports of the .py files, in order and once each; relative imports, other
    files and a file that does not parse name none."""
    files = [
        ("acceptance/test_a.py", b"import os.path, json\nfrom hypothesis import given, st\n"),
        ("acceptance/test_b.py", b"from . import helpers\nfrom __future__ import annotations\n"),
        ("acceptance/test_c.py", b"import json\nfrom pstats import *\n"),
        ("acceptance/broken.py", b"import decimal\ndef (:\n"),
        ("data/cases.json", b'{"import": "csv"}'),
    ]

    assert imported_modules(files) == [
        "os.path",
        "json",
        "hypothesis",
        "hypothesis.given",
        "hypothesis.st",
        "pstats",
    ]
