"""The hostile suite for the JavaScript boundary (tests/hostile/js/b_*.mjs): candidates whose
slug is wrong in a way only the hidden test file sees, each trying one road to a pass it did not
earn: a data: URL module, code in strings (eval, Function), process.getBuiltinModule, reading
the test files (process.binding('fs'), fs, a walk of /), forged runner events on the test
process's stdout, a returned String object that lies, and prototype pollution.

Behind the boundary the candidate runs in a node process of its own, in a tree with no test
file, and the verdict is the tests' runner's report from a launch with no candidate code: no
hidden test passes, whatever the road, with the pre-check and without it.
"""

from __future__ import annotations

import os

import pytest

from harness.results import Outcome, TestResult
from harness.tasks.spec import TaskSpec
from harness.testrun import TestLimits, launch, run_tests
from harness.testrun.foreign import run_foreign
from harness.testrun.launch import bwrap_works
from harness.testrun.run import sandbox_kind
from tests._foreign import FOREIGN, HOSTILE, needs_node

pytestmark = [
    pytest.mark.slow,
    needs_node,
    pytest.mark.skipif(not bwrap_works(), reason="the JavaScript boundary needs bubblewrap"),
]

JSB = FOREIGN / "jsb"
VISIBLE = ("slug lowercases and joins words with a dash", "slug keeps digits")
HIDDEN = (
    "slug collapses runs of spaces",
    "slug never has a doubled dash",
    "slug starts with the first letter",
)
ROUTES = {
    "a data: URL module": ("b_data_url_base64", "b_data_url_plain", "b_data_url_test"),
    "code in strings": ("b_eval_concat", "b_eval_function", "b_eval_indirect"),
    "process.getBuiltinModule": ("b_builtin_assert", "b_builtin_computed", "b_builtin_require"),
    "reading the test files": ("b_read_binding", "b_read_builtin_fs", "b_read_proc_root"),
    "forged runner events": ("b_stdout_flip", "b_stdout_forge_tap", "b_stdout_fd"),
    "a lying String": ("b_string_object", "b_string_subclass", "b_string_proto"),
    "prototype pollution": ("b_pollute_includes", "b_pollute_define", "b_pollute_object_is"),
}
CANDIDATES = sorted(name for names in ROUTES.values() for name in names)
LIMITS = TestLimits(timeout_s=120)


def slug_task(**overrides: object) -> TaskSpec:
    """A one-function ES module task: two visible tests a wrong slug passes, a hidden file of
    three it fails; node's own runner writing JUnit to {results}."""
    fields: dict[str, object] = {
        "id": "slug_js",
        "base_dir": JSB,
        "reference": (),
        "tests": (JSB / "tests" / "visible.test.mjs",),
        "hidden_tests": (JSB / "hidden" / "hidden.test.mjs",),
        "output": JSB / "src" / "text.mjs",
        "language": "javascript",
        "test_command": (
            "node",
            "--test",
            "--test-reporter=junit",
            "--test-reporter-destination={results}",
            "{tests}",
        ),
        "results": "junit",
    }
    return TaskSpec(**{**fields, **overrides})  # type: ignore[arg-type]


def _code(name: str) -> str:
    return (HOSTILE / "js" / f"{name}.mjs").read_text()


def _outcomes(result: TestResult) -> dict[str, Outcome]:
    return {c.nodeid: c.outcome for c in result.cases}


def test_the_honest_slug_passes_every_test_behind_the_boundary() -> None:
    """The control: the right slug passes the visible and the hidden tests alike."""
    result = run_tests(slug_task(), (JSB / "good.mjs").read_text(), limits=LIMITS)

    assert _outcomes(result) == dict.fromkeys((*VISIBLE, *HIDDEN), Outcome.PASSED)
    assert result.error is None and not result.tampered


@pytest.mark.parametrize("name", CANDIDATES)
def test_no_road_gives_the_wrong_slug_a_hidden_pass(name: str) -> None:
    """Whatever the candidate does to its own process, the hidden tests, which its slug fails,
    are not passed: with the pre-check (as a night runs it) and without it."""
    checked = run_tests(slug_task(), _code(name), limits=LIMITS)
    unchecked = run_foreign(slug_task(), _code(name), LIMITS, sandbox_kind(LIMITS), checked=False)

    for result in (checked, unchecked):
        outcomes = _outcomes(result)
        assert set(outcomes) == {*VISIBLE, *HIDDEN}
        assert [i for i in HIDDEN if outcomes[i] is Outcome.PASSED] == []


@pytest.mark.parametrize("name", CANDIDATES)
def test_in_process_the_same_candidates_would_pass_what_they_should_not(name: str) -> None:
    """The holes the boundary closes, shown: with the candidate loaded in the test process
    (`isolation: in_process`, the only mode before) each of them passes a hidden test."""
    task = slug_task(isolation="in_process")

    result = run_foreign(task, _code(name), LIMITS, sandbox_kind(LIMITS), checked=False)

    assert any(_outcomes(result).get(i) is Outcome.PASSED for i in HIDDEN)


CODEC = FOREIGN / "jscodec"


def test_callbacks_and_objects_of_the_tests_do_not_reach_the_test_process() -> None:
    """A callback's constructor, an object's constructor and prototype: the candidate gets a
    capability to call and what the object's own class defines, so the roads to the test
    process's Function (and through it to its node:assert) end in the candidate's own process;
    the wrong mapEach and callMethod fail, and the other tests pass."""
    task = slug_task(
        id="codec",
        base_dir=CODEC,
        tests=(CODEC / "tests" / "codec.test.mjs",),
        hidden_tests=(),
        output=CODEC / "codec.mjs",
    )
    code = _code_file("c_reach_through_callbacks")

    result = run_foreign(task, code, LIMITS, sandbox_kind(LIMITS), checked=False)

    failed = {i for i, o in _outcomes(result).items() if o is not Outcome.PASSED}
    assert failed == {
        "callbacks are called across, sync, with their results",
        "an object with methods passed in is reached by its methods",
    }


def _code_file(name: str) -> str:
    return (HOSTILE / "js" / f"{name}.mjs").read_text()


OLD = {  # the earlier candidates whose `sub` is wrong, and what each does to its process
    "h_fake_pass_lines": "forged TAP and JUnit on stdout",
    "h_neuter_assert": "assert's strictEqual replaced",
    "h_neuter_assert_computed": "the same, through a computed require",
    "h_neuter_assert_hex": "the same, through a \\x escape",
    "h_neuter_assert_unicode": "the same, through a \\u escape",
    "h_neuter_test_braces": "node:test's mock replaced",
    "h_read_tests_fs": "the answer read from the test file",
    "h_report_rewrite": "a forged report into every descriptor",
}


@pytest.mark.parametrize("name", sorted(OLD))
def test_the_earlier_candidates_get_no_pass_behind_the_boundary(name: str) -> None:
    """The earlier hostile candidates (tests/hostile/js/h_*.js, calc task), pre-check
    bypassed: the wrong `sub` is never passed."""
    from tests._foreign import hostile, js_task

    result = run_foreign(
        js_task(), hostile("js", name), LIMITS, sandbox_kind(LIMITS), checked=False
    )

    assert _outcomes(result)["subtracts"] is not Outcome.PASSED


CGROUP = FOREIGN / "jscgroup"
CGROUP_TESTS = (
    "the test file runs inside the launch groups",
    "the candidate ran its first line inside the launch groups",
    "the candidate holds no cgroup file",
    "the candidate moves no process into a group",
)


@pytest.mark.skipif(
    os.geteuid() != 0 or not launch.bootstrapless("bwrap"),
    reason="launch cgroups are made as root only, and joined by the lock-down programs",
)
@pytest.mark.parametrize("isolation", ["boundary", "in_process"])
def test_the_candidate_starts_inside_its_launch_cgroups_and_holds_none_of_their_files(
    monkeypatch: pytest.MonkeyPatch, isolation: str
) -> None:
    """node's cgroups are joined beside its start (made late here: the root writer comes half
    a second after node runs), yet the candidate's first line runs inside the launch's pids and
    memory groups, in its own process and in the test process alike, as does the test file's;
    and no fd of a cgroup file is within its reach to move a process (bubblewrap's) in."""
    late = '(while read c < /proc/$$/comm && [ "$c" != node ]; do sleep 0.01; done; sleep 0.5; '
    monkeypatch.setattr(launch, "_JOIN_BESIDE", launch._JOIN_BESIDE.replace("(", late, 1))
    task = slug_task(
        id="cgroup_reach",
        base_dir=CGROUP,
        tests=(CGROUP / "tests" / "probe.test.mjs",),
        hidden_tests=(),
        output=CGROUP / "src" / "reach.mjs",
        isolation=isolation,
    )

    result = run_foreign(task, _code("b_cgroup_reach"), LIMITS, sandbox_kind(LIMITS), checked=False)

    assert result.in_process == (isolation == "in_process")
    assert _outcomes(result) == dict.fromkeys(CGROUP_TESTS, Outcome.PASSED), result.output
