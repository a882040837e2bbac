"""bench/memo.py: outcome nights reuse a test result only for byte-identical tests and code,
timed nights never do, and a remembered result that a fresh run contradicts is reported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.memo import Memo, sandbox_verdict  # noqa: E402
from harness.results import Outcome, TestCase, TestResult  # noqa: E402
from harness.tasks.spec import TaskSpec  # noqa: E402


class Runner:
    """A stand-in test runner that counts its runs; its verdict comes from `passing`."""

    def __init__(self) -> None:
        self.runs = 0
        self.passing = True

    def __call__(self, spec: TaskSpec, code: str) -> TestResult:
        self.runs += 1
        outcome = Outcome.PASSED if self.passing else Outcome.FAILED
        case = TestCase("test_calc.py::test_add", outcome)
        return TestResult(cases=(case,), output=f"run {self.runs}", duration_s=0.1 * self.runs)


@pytest.fixture
def spec(tmp_path: Path) -> TaskSpec:
    (tmp_path / "acceptance").mkdir()
    (tmp_path / "acceptance" / "test_calc.py").write_text("import calc\n")
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "test_more.py").write_text("import calc\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("X = 1\n")
    return TaskSpec(
        id="calc",
        base_dir=tmp_path,
        reference=(),
        tests=(tmp_path / "acceptance" / "test_calc.py",),
        output=tmp_path / "out" / "calc.py",
        support=(tmp_path / "lib",),
        hidden_tests=(tmp_path / "hidden" / "test_more.py",),
    )


def test_same_tests_and_code_run_once(spec: TaskSpec) -> None:
    """A second run of the same tests on the same code takes the remembered result."""
    runner, memo = Runner(), Memo(sandbox_verdict, verify=0)
    run = memo.wrap(runner)

    first, second = run(spec, "code"), run(spec, "code")

    assert runner.runs == 1 and second is first
    assert memo.to_json() == {"runs": 1, "hits": 1, "verified_hits": 0, "mismatches": []}


def test_other_code_or_changed_test_inputs_run_again(spec: TaskSpec) -> None:
    """The key is the code and the bytes of every test, hidden test and support file."""
    runner = Runner()
    run = Memo(sandbox_verdict, verify=0).wrap(runner)
    run(spec, "code")

    run(spec, "other code")
    assert runner.runs == 2
    spec.tests[0].write_text("import calc  # changed\n")
    run(spec, "code")
    assert runner.runs == 3
    spec.hidden_tests[0].write_text("import calc  # changed\n")
    run(spec, "code")
    assert runner.runs == 4
    (spec.support[0] / "helper.py").write_text("X = 2\n")  # inside a support folder
    run(spec, "code")
    assert runner.runs == 5
    run(spec, "code")
    assert runner.runs == 5


def test_a_timed_night_always_runs_and_leaves_its_results(spec: TaskSpec) -> None:
    """Without reuse every run happens; its result still serves a later untimed night."""
    runner, memo = Runner(), Memo(sandbox_verdict, verify=0)
    timed, untimed = memo.wrap(runner, reuse=False), memo.wrap(runner)

    timed(spec, "code")
    timed(spec, "code")
    assert runner.runs == 2
    untimed(spec, "code")
    assert runner.runs == 2 and memo.hits == 1


def test_the_first_hits_are_checked_against_a_fresh_run(spec: TaskSpec) -> None:
    """The first `verify` reuses run anyway; a verdict that differs is reported by task."""
    runner, memo = Runner(), Memo(sandbox_verdict, verify=2)
    run = memo.wrap(runner)
    run(spec, "code")

    run(spec, "code")  # verified: same verdict, though output and duration differ
    assert runner.runs == 2 and memo.mismatches == []
    runner.passing = False
    run(spec, "code")  # verified: the fresh run contradicts the remembered one
    assert runner.runs == 3 and memo.mismatches == ["calc"]
    run(spec, "code")  # past the checks: the remembered result is used
    assert runner.runs == 3 and memo.verified == 2


def test_the_verdict_is_the_outcomes_and_flags_not_the_text() -> None:
    """Output text and duration do not count; an outcome or the tamper flag does."""
    case = TestCase("t.py::test_a", Outcome.PASSED)
    base = TestResult(cases=(case,), output="1 passed in 0.01s", duration_s=0.01)

    assert sandbox_verdict(base) == sandbox_verdict(
        TestResult(cases=(case,), output="1 passed in 0.30s", duration_s=0.3)
    )
    assert sandbox_verdict(base) != sandbox_verdict(
        TestResult(cases=(TestCase("t.py::test_a", Outcome.FAILED),))
    )
    assert sandbox_verdict(base) != sandbox_verdict(TestResult(cases=(case,), tampered=True))
