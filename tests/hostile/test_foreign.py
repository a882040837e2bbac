"""The hostile suite for foreign runners: Go and node candidates (tests/hostile/go, /js) that
forge pass lines or events, rewrite the report, exit 0 early, hang, or read secrets.

Each runs with the static pre-check bypassed (so the runner and scorer must hold), under every
sandbox available here, and its outcome is asserted exactly.
"""

from __future__ import annotations

import pytest

from harness.results import Outcome, TestResult
from harness.testrun import TestLimits, run_tests
from harness.testrun.foreign import run_foreign
from harness.testrun.run import sandbox_kind
from tests._foreign import GO_TESTS, JS_TESTS, go_task, hostile, js_task, needs_go, needs_node
from tests.hostile.test_python import KINDS, record_markers, sandbox_survivors

pytestmark = pytest.mark.slow

__all__ = ["record_markers"]  # the autouse fixture that lets sandbox_survivors see our launches

SECRET = "sk-test-hostile-foreign-7c2e9a41"
P, F, E = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR


def _limits(kind: str, timeout_s: float = 60) -> TestLimits:
    return TestLimits(timeout_s=timeout_s, sandbox=kind)  # type: ignore[arg-type]


def _run(lang: str, name: str, kind: str, timeout_s: float = 60) -> TestResult:
    task = go_task() if lang == "go" else js_task()
    limits = _limits(kind, timeout_s)
    return run_foreign(task, hostile(lang, name), limits, sandbox_kind(limits), checked=False)


def _outcomes(result: TestResult) -> list[Outcome]:
    return [c.outcome for c in result.cases]


def _tampered_with(result: TestResult, reason: str, ids: tuple[str, ...]) -> bool:
    return (
        result.tampered
        and reason in (result.error or "")
        and [c.nodeid for c in result.cases] == list(ids)
        and _outcomes(result) == [E] * len(ids)
        and result.passed == 0
    )


@needs_go
@pytest.mark.parametrize("kind", KINDS)
def test_go_forged_pass_lines_and_events_are_tampering(kind: str) -> None:
    """Forged `--- PASS` lines and JSON events beside the real run: a test reported twice."""
    result = _run("go", "h_fake_pass_lines", kind)

    assert _tampered_with(result, "tampered: test 'TestAdd' was started twice", GO_TESTS)


@needs_go
@pytest.mark.parametrize("kind", KINDS)
def test_go_exit_0_during_a_test_fails_that_test(kind: str) -> None:
    """os.Exit(0) inside a test panics (-test.paniconexit0): that test fails, later ones never
    ran, and its forged PASS line does not count."""
    result = _run("go", "h_exit_in_test", kind)

    assert _outcomes(result) == [P, F, E]
    assert "unexpected call to os.Exit(0) during test" in result.cases[1].message
    assert not result.tampered


@needs_go
@pytest.mark.parametrize("kind", KINDS)
def test_go_exit_0_at_init_is_tampering(kind: str) -> None:
    """Exit 0 before any test runs: no test reported, yet a clean exit status."""
    result = _run("go", "h_exit_at_init", kind)

    assert _tampered_with(result, "exited 0 but not every test passed", GO_TESTS)


@needs_go
@pytest.mark.parametrize("kind", KINDS)
def test_go_real_output_silenced_under_a_forged_transcript_is_tampering(kind: str) -> None:
    """The real failure sent to /dev/null and a passing transcript printed instead: the test
    binary still exits 1, which no all-pass report agrees with."""
    result = _run("go", "h_silence_and_forge", kind)

    assert _tampered_with(result, "exited 1 but every test passed", GO_TESTS)


@needs_go
def test_go_transcript_forged_at_init_is_stopped_by_the_precheck() -> None:
    """A whole passing transcript printed from init, then exit 0, is indistinguishable from a
    pass in-process: the static pre-check refuses it (it names Exit) before anything runs."""
    result = run_tests(
        go_task(), hostile("go", "h_forge_transcript_at_init"), limits=_limits("auto")
    )

    assert result.rejected
    assert _outcomes(result) == [E, E, E]
    assert "may not name Exit" in (result.error or "")


@needs_go
@pytest.mark.parametrize("kind", KINDS)
def test_go_hang_is_killed_with_its_whole_tree(kind: str) -> None:
    """A test that spins forever: the wall clock ends the run, nothing survives, no pass."""
    result = _run("go", "h_hang", kind, timeout_s=15)

    assert result.timed_out and not result.tampered
    assert _outcomes(result) == [E, E, E]
    assert sandbox_survivors() == []


@needs_node
@pytest.mark.parametrize("kind", KINDS)
def test_node_forged_tap_and_junit_on_stdout_are_ignored(kind: str) -> None:
    """Lines and XML on stdout are not the report: the real failure stands."""
    result = _run("js", "h_fake_pass_lines", kind)

    assert _outcomes(result) == [P, F, P]
    assert not result.tampered


@needs_node
@pytest.mark.parametrize("kind", KINDS)
def test_node_report_written_by_the_candidate_is_tampering(kind: str) -> None:
    """A forged report pushed into the runner's descriptors breaks the one real document."""
    result = _run("js", "h_report_rewrite", kind)

    assert _tampered_with(result, "not one well-formed document", JS_TESTS)


@needs_node
@pytest.mark.parametrize("kind", KINDS)
def test_node_exit_0_at_load_is_tampering(kind: str) -> None:
    """process.exit(0) before any test: node calls the file passed; the tests never ran."""
    result = _run("js", "h_exit_early", kind)

    assert _tampered_with(result, "exited 0 but not every test passed", JS_TESTS)


@needs_node
@pytest.mark.parametrize("kind", KINDS)
def test_node_hang_is_killed_with_its_detached_child(kind: str) -> None:
    """A test that spins forever and a detached child: both end with the run, no pass."""
    result = _run("js", "h_hang", kind, timeout_s=8)

    assert result.timed_out and not result.tampered
    assert _outcomes(result) == [E, E, E]
    assert sandbox_survivors() == []


def _shown_after_leak(lang: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Everything the run shows (output, messages, details) after the candidate dumps its env."""
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.setenv(name, SECRET)
    result = _run(lang, "h_secret_leak", kind)
    return result.output + "".join(c.message + c.details for c in result.cases)


@needs_go
@pytest.mark.parametrize("kind", KINDS)
def test_go_tests_see_no_secret(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test environment is an allowlist: the candidate dumps it, and no key is in it."""
    shown = _shown_after_leak("go", kind, monkeypatch)

    assert "GOPROXY=off" in shown  # the dump did happen
    assert SECRET not in shown and "API_KEY" not in shown


@needs_node
@pytest.mark.parametrize("kind", KINDS)
def test_node_tests_see_no_secret(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test environment is an allowlist: the candidate dumps it, and no key is in it."""
    shown = _shown_after_leak("js", kind, monkeypatch)

    assert "npm_config_offline=true" in shown  # the dump did happen
    assert SECRET not in shown and "API_KEY" not in shown


@needs_node
def test_node_assertions_disarmed_in_process_are_stopped_only_by_the_precheck() -> None:
    """Replacing assert's functions in the test process makes node itself call a failing test
    passed: the runner cannot see it (a documented residual limit); the pre-check refuses the
    candidate for loading node:assert."""
    code = hostile("js", "h_neuter_assert")

    refused = run_tests(js_task(), code, limits=_limits("auto"))
    unchecked = _run("js", "h_neuter_assert", "auto")

    assert refused.rejected and _outcomes(refused) == [E, E, E]
    assert "may not load the module 'node:assert'" in (refused.error or "")
    assert _outcomes(unchecked) == [P, P, P]  # the hole the pre-check covers
