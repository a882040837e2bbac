"""The loop's policy switches (review on attempt 1 on or off, fix prompts focused or full)
and the expected-test collection it starts beside the first call."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from harness.config import ConfigError, FixFailures, load_config
from harness.pipeline import run_task
from harness.pipeline.steps import full_report
from harness.results import Outcome, TaskStatus, TestCase, TestResult
from harness.sim.model import read_features
from tests.pipeline.test_task import ScriptedProvider, make_env, reply, scripted_tests


def test_review_off_sends_the_draft_straight_to_the_tests(tmp_path, spec) -> None:
    """With `loop: {review: false}` attempt 1 is one write call, then fixes."""
    provider = ScriptedProvider({("write", 1): reply(3), ("fix", 2): reply(5)})
    env, _ = make_env(tmp_path, provider, review=False)

    result = run_task(spec, env)

    assert provider.steps() == [("write", 1), ("fix", 2)]
    assert (result.status, result.attempts[0].review) == (TaskStatus.PASSED, None)


def test_full_fix_prompt_shows_every_visible_outcome_in_run_order(tmp_path, spec) -> None:
    """`fix_failures: full` shows passing tests too, failures with their tracebacks."""
    provider = ScriptedProvider(
        {("write", 1): reply(3), ("review", 1): "CLEAN", ("fix", 2): reply(5)}
    )
    env, _ = make_env(tmp_path, provider, fix_failures=FixFailures.FULL)

    run_task(spec, env)

    fix = provider.requests[-1].prompt.variable
    expected = [
        "test_calc.py::t0 PASSED",
        "test_calc.py::t1 PASSED",
        "test_calc.py::t2 PASSED",
        "FAILED test_calc.py::t3 - AssertionError: t3",
        "E   assert t3",
        "FAILED test_calc.py::t4 - AssertionError: t4",
        "E   assert t4",
        "===== 2 failed, 3 passed =====",
    ]
    assert "\n".join(expected) in fix
    assert "## Failing tests" not in fix


def test_full_report_never_names_a_hidden_test() -> None:
    """Hidden tests stay out of the full report, as out of the focused one."""
    result = TestResult(
        (
            TestCase("t.py::seen", Outcome.PASSED),
            TestCase("t.py::secret_pass", Outcome.PASSED, hidden=True),
            TestCase("t.py::secret_fail", Outcome.FAILED, "boom", hidden=True),
            TestCase("t.py::broken", Outcome.ERROR, "ImportError"),
        )
    )

    report = full_report(result)

    assert "secret" not in report
    assert report.splitlines() == [
        "t.py::seen PASSED",
        "ERROR t.py::broken - ImportError",
        "===== 1 failed, 1 passed =====",
    ]


def test_the_simulator_reads_a_full_fix_prompt_as_unfocused(tmp_path, spec) -> None:
    """The behaviour model sees the full dump and counts the failures it shows."""
    provider = ScriptedProvider(
        {("write", 1): reply(2), ("review", 1): "CLEAN", ("fix", 2): reply(5)}
    )
    env, _ = make_env(tmp_path, provider, fix_failures=FixFailures.FULL)
    run_task(spec, env)

    features = read_features(provider.requests[-1])

    assert (features.focused, features.failures_shown) == (False, 3)


def test_focused_fix_prompt_stays_focused_for_the_simulator(tmp_path, spec) -> None:
    """The shipped focused prompt reads as focused, with its failure count."""
    provider = ScriptedProvider(
        {("write", 1): reply(1), ("review", 1): "CLEAN", ("fix", 2): reply(5)}
    )
    env, _ = make_env(tmp_path, provider)
    run_task(spec, env)

    features = read_features(provider.requests[-1])

    assert (features.focused, features.failures_shown) == (True, 4)


def test_policy_switches_load_from_harness_yaml(tmp_path) -> None:
    """`loop: {review: false, fix_failures: full}` in harness.yaml reaches the loop config."""
    path = tmp_path / "harness.yaml"
    path.write_text("loop:\n  review: false\n  fix_failures: full\n")

    loop = load_config(path).loop

    assert (loop.review, loop.fix_failures, loop.stop_after_no_improvement) == (
        False,
        FixFailures.FULL,
        2,
    )


def test_an_unknown_fix_failures_value_names_the_choices(tmp_path) -> None:
    """A typo in fix_failures is a config error naming the allowed values."""
    path = tmp_path / "harness.yaml"
    path.write_text("loop:\n  fix_failures: everything\n")

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    message = str(caught.value)
    assert "fix_failures" in message and "focused" in message and "full" in message


def test_shipped_defaults_review_and_focus() -> None:
    """The shipped loop reviews attempt 1 and sends focused failures (the bench's best)."""
    loop = load_config().loop

    assert (loop.review, loop.fix_failures) == (True, FixFailures.FOCUSED)


def test_expected_tests_are_collected_beside_the_first_call_and_joined_before_tests(
    tmp_path, spec
) -> None:
    """The collection starts with the task, overlaps the write call, ends before any test."""
    during_write = threading.Event()
    log: list[str] = []

    class Provider(ScriptedProvider):
        def complete(self, request):
            during_write.set()
            return super().complete(request)

    def expect(_spec) -> None:
        log.append("expect started")
        assert during_write.wait(timeout=10), "the write call never overlapped the collection"
        log.append("expect done")

    def run_tests(task_spec, candidate):
        log.append("tests")
        return scripted_tests(task_spec, candidate)

    provider = Provider({("write", 1): reply(5), ("review", 1): "CLEAN"})
    env, _ = make_env(tmp_path, provider)
    env = replace(env, expect_tests=expect, run_tests=run_tests)

    result = run_task(spec, env)

    assert result.status is TaskStatus.PASSED
    assert log == ["expect started", "expect done", "tests"]


def test_a_failed_collection_in_the_background_leaves_the_test_run_to_report_it(
    tmp_path, spec
) -> None:
    """A background failure is not the task's fault: the tests still run on their own path."""

    def expect(_spec) -> None:
        raise RuntimeError("sandbox hiccup")

    provider = ScriptedProvider({("write", 1): reply(5), ("review", 1): "CLEAN"})
    env, _ = make_env(tmp_path, provider)
    env = replace(env, expect_tests=expect)

    result = run_task(spec, env)

    assert result.status is TaskStatus.PASSED
