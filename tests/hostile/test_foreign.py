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


# Every Go candidate here has a wrong Sub. What each attack gets, under every sandbox: the
# verdict is a nonce printed by the harness's wrapper after the real test returned (gorun).
GO_OUTCOMES = {
    # A forged transcript or test2json events beside the real run: the real outcome stands.
    "h_fake_pass_lines": [P, F, P],
    # os.Exit(0) in a test panics (-test.paniconexit0); the rest run in a second launch.
    "h_exit_in_test": [P, F, P],
    # Exit 0 from init, with or without a whole passing transcript first: nothing ran.
    "h_exit_at_init": [E, E, E],
    "h_forge_transcript_at_init": [E, E, E],
    # The harness's arguments rewritten from init: `-h`, `-test.run=^$`, the failing test left
    # out of -test.run with a forged PASS in its place.
    "h_args_help": [E, E, E],
    "h_args_run_nothing": [E, E, E],
    "h_args_run_others": [P, E, P],
    # stdout silenced under a forged transcript: no confirmation reaches the harness.
    "h_silence_and_forge": [E, E, E],
    # runtime.Goexit in the failing test: it never returned, so it is not confirmed.
    "h_goexit_in_test": [P, F, P],
    # Its own executable and memory read for anything shaped like a nonce: exec-only, no /proc.
    "h_read_binary": [P, F, P],
}


@needs_go
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(GO_OUTCOMES))
def test_no_go_candidate_gets_a_pass_it_did_not_earn(name: str, kind: str) -> None:
    """Forged transcripts, early exits, rewritten arguments, Goexit, reading its own binary:
    the wrong Sub never passes, and every other test scores as it really ran."""
    result = _run("go", name, kind)

    assert (_outcomes(result), result.tampered) == (GO_OUTCOMES[name], False)


# Each of these makes the wrong Sub pass on a second run in the same process, learned or by
# its own state: the binary's flags rewritten from init() (-test.count, -test.cpu), test.count
# set with `flag` during a run, and the first run's `want` read back from its own stdout.
GO_RERUNS = (
    "h_count_at_init",
    "h_count_by_flag_set",
    "h_cpu_list_at_init",
    "h_learn_want_from_stdout",
)


@needs_go
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", GO_RERUNS)
def test_a_go_test_run_twice_in_one_process_confirms_nothing(name: str, kind: str) -> None:
    """The nonce means "ran exactly once, with the harness's flags": a second run, or flags
    changed inside the binary, print the tamper mark instead, and nothing passes."""
    result = _run("go", name, kind)

    assert _tampered_with(result, "a test ran twice in one process", GO_TESTS)


@needs_go
@pytest.mark.parametrize("name", GO_RERUNS)
def test_the_go_reruns_are_refused_by_the_policy_before_anything_is_built(name: str) -> None:
    """Through the public entry point the shipped policy refuses `os` and `flag`: nothing
    is built or run."""
    result = run_tests(go_task(), hostile("go", name), limits=_limits("auto"))

    assert result.rejected and _outcomes(result) == [E, E, E]
    assert "is not allowed in candidate code" in (result.error or "")


@needs_go
def test_go_relays_of_the_real_output_confirm_nothing_for_a_wrong_test() -> None:
    """stdout taken over with a pipe and every line relayed three times: a confirmation seen
    for one test is useless for another, so the wrong Sub never passes."""
    result = _run("go", "h_stdout_relay", "auto")

    assert result.cases[1].outcome is not P


@needs_go
def test_go_tests_are_not_in_the_run_launch_for_the_candidate_to_read() -> None:
    """The test binary runs in a launch with no source and no test file: a candidate that
    looks for the answer key (working folder, /proc/self/cwd, a walk of /) finds none."""
    if "bwrap" not in KINDS:
        pytest.skip("the rlimits fallback has no file-system isolation (a documented limit)")
    result = _run("go", "h_read_tests", "bwrap")

    assert _outcomes(result) == [P, F, P]


@needs_go
def test_go_answer_key_embedded_at_build_time_is_stopped_by_the_precheck() -> None:
    """//go:embed copies the test files into the binary at build time; the pre-check refuses
    the `embed` import that any go:embed directive needs, before anything is built."""
    refused = run_tests(go_task(), hostile("go", "h_embed_tests"), limits=_limits("auto"))
    unchecked = _run("go", "h_embed_tests", "auto")

    assert refused.rejected and _outcomes(refused) == [E, E, E]
    assert "importing embed is not allowed" in (refused.error or "")
    assert _outcomes(unchecked) == [P, P, P]  # the hole the pre-check covers


@needs_go
@pytest.mark.parametrize("kind", KINDS)
def test_go_hang_is_killed_with_its_whole_tree(kind: str) -> None:
    """A test that spins forever: the binary's own timeout (or the wall clock) ends it, no
    pass for it, nothing survives."""
    limits = TestLimits(timeout_s=90, per_test_timeout_s=3, sandbox=kind)  # type: ignore[arg-type]
    result = run_foreign(
        go_task(), hostile("go", "h_hang"), limits, sandbox_kind(limits), checked=False
    )

    assert result.cases[2].outcome in (F, E) and not result.tampered
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
def test_node_report_written_by_the_candidate_is_tampering_or_out_of_reach(kind: str) -> None:
    """A forged report pushed into every descriptor the candidate can reach: in the test
    process (no bubblewrap) it breaks the one real document; behind the boundary the
    candidate's process holds no descriptor of the tests' launch, and the real failure stands."""
    result = _run("js", "h_report_rewrite", kind)

    if kind == "bwrap":
        assert (_outcomes(result), result.tampered) == ([P, F, P], False)
    else:
        assert _tampered_with(result, "not one well-formed document", JS_TESTS)


@needs_node
@pytest.mark.parametrize("kind", KINDS)
def test_node_exit_0_at_load_passes_nothing(kind: str) -> None:
    """process.exit(0) before any test: in the test process node calls the file passed and the
    exit status gives it away (tampering); behind the boundary only the candidate's own process
    ends, and the tests that needed it error."""
    result = _run("js", "h_exit_early", kind)

    if kind == "bwrap":
        assert (_outcomes(result), result.tampered) == ([E, E, E], False)
    else:
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
@pytest.mark.parametrize("kind", KINDS)
def test_node_assertions_disarmed_are_out_of_reach_behind_the_boundary(kind: str) -> None:
    """Replacing assert's functions: in the test process (no bubblewrap) node itself calls the
    failing test passed, a hole only the pre-check covers (it refuses node:assert); behind the
    boundary the candidate disarms its own process's copy, and the failure stands."""
    code = hostile("js", "h_neuter_assert")

    refused = run_tests(js_task(), code, limits=_limits(kind))
    unchecked = _run("js", "h_neuter_assert", kind)

    assert refused.rejected and _outcomes(refused) == [E, E, E]
    assert "may not load the module 'node:assert'" in (refused.error or "")
    assert _outcomes(unchecked) == ([P, F, P] if kind == "bwrap" else [P, P, P])


JS_REFUSED = {
    "h_neuter_assert": "'node:assert'",
    "h_neuter_assert_unicode": "'node:assert/strict'",
    "h_neuter_assert_hex": "'node:assert'",
    "h_neuter_test_braces": "'node:test'",
    "h_read_tests_fs": "'fs'",
    "h_neuter_assert_computed": "computed require/import",
}


@pytest.mark.parametrize("name", sorted(JS_REFUSED))
def test_js_roads_into_the_test_process_are_refused_on_the_parsed_tree(name: str) -> None:
    """Loading assert, node:test or fs, however the specifier is spelled (\\u0061, \\x61,
    \\u{65}, computed), is refused before anything runs: specifiers are read from the parsed
    tree with escapes decoded, against the list of modules a candidate may not load."""
    result = run_tests(js_task(), hostile("js", name), limits=_limits("auto"))

    assert (result.rejected, _outcomes(result)) == (True, [E, E, E])
    assert JS_REFUSED[name] in (result.error or "")
