"""The loop with differential results: a difference keeps the fixes going, reaches the fix
prompt, ranks attempts after the tests, and a resume keeps what was recorded."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from harness.pipeline import run_task
from harness.pipeline.env import Prior
from harness.results import AttemptRecord, Difference, Differential, TaskStatus, TestResult
from harness.store.store import StoredAttempt
from harness.tasks.spec import TaskSpec
from tests.pipeline.test_task import ScriptedProvider, make_env, scripted_tests

FOUND = Difference("add(3, -1)", "returns `2`", "returns `4`", "generated")


def candidate(differs: int) -> str:
    body = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
    return body + f"PASSES = 5\nDIFFERS = {differs}\n"


def answer(differs: int) -> str:
    return f"Here it is.\n```python\n{candidate(differs)}```\n"


def checked(spec: TaskSpec, code: str, required: bool = False) -> TestResult:
    """Every test passes; DIFFERS says how many calls differ from the reference."""
    differs = int(re.search(r"DIFFERS = (\d+)", code).group(1))
    found = Differential(
        agreed=200, differed=differs, differences=(FOUND,) * min(differs, 1), required=required
    )
    return replace(scripted_tests(spec, code), differential=found)


def test_a_candidate_passing_every_test_but_differing_is_fixed_with_the_call_shown(
    tmp_path: Path, spec: TaskSpec
) -> None:
    """Attempt 1 passes all tests but differs: the loop does not stop, the fix prompt shows
    the call and both results, and the agreeing fix becomes the best (tests tie)."""
    provider = ScriptedProvider(
        {("write", 1): answer(1), ("review", 1): "CLEAN", ("fix", 2): answer(0)}
    )
    env, _ = make_env(tmp_path, provider)

    result = run_task(spec, replace(env, run_tests=checked))

    fix_prompt = provider.requests[-1].prompt.variable
    assert "`add(3, -1)`: the reference returns `2`, yours returns `4`" in fix_prompt
    assert (result.status, result.best_attempt) == (TaskStatus.PASSED, 2)
    assert [a.differential.differed for a in result.attempts] == [1, 0]
    assert result.differential is not None and result.differential.differed == 0


def test_required_agreement_keeps_a_differing_candidate_from_passing(
    tmp_path: Path, spec: TaskSpec
) -> None:
    """With `differential.required`, a candidate that passes every test but still differs
    after its fixes ends partial, not passed."""
    script = {("write", 1): answer(1), ("review", 1): "CLEAN"}
    script |= {("fix", n): answer(1) for n in range(2, 6)}
    provider = ScriptedProvider(script)
    env, _ = make_env(tmp_path, provider, stop_after_no_improvement=1)

    result = run_task(spec, replace(env, run_tests=lambda s, c: checked(s, c, required=True)))

    assert (result.status, result.passed, result.total) == (TaskStatus.PARTIAL, 5, 5)
    assert len(result.attempts) == 2  # the fix that did not lower the count stopped it


def test_a_resume_keeps_the_recorded_differential_result(tmp_path: Path, spec: TaskSpec) -> None:
    """Attempt 1 recorded with its differential result is not tested again on resume: its
    record and the ratchet keep the stored result, and the fix after it sees the call."""
    recorded = checked(spec, candidate(1))
    record = AttemptRecord(n=1, kind="write", passed=5, total=5, differential=recorded.differential)
    prior = Prior(attempts=(StoredAttempt("r1", record, candidate(1), recorded),))
    provider = ScriptedProvider({("fix", 2): answer(0)})
    env, _ = make_env(tmp_path, provider)
    tested: list[str] = []

    def run(s: TaskSpec, code: str) -> TestResult:
        tested.append(code)
        return checked(s, code)

    result = run_task(spec, replace(env, run_tests=run), prior)

    assert tested == [candidate(0)]  # only the new attempt ran
    assert result.attempts[0].differential == recorded.differential
    assert "`add(3, -1)`" in provider.requests[0].prompt.variable
    assert result.best_attempt == 2
