"""The principle judge (loop.judge): gated, paid through the Caller, never outranking tests."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from harness.budget import Budget
from harness.calls.caller import Caller
from harness.config import JudgeConfig
from harness.llm import (
    AuthenticationError,
    Completion,
    ErrorKind,
    ProviderError,
    StopReason,
    Usage,
)
from harness.pipeline import run_task
from harness.pipeline.judge import compared_test_literals
from harness.report import render_metrics
from harness.results import JudgeOutcome, TaskStatus
from harness.store import RunDir
from harness.tasks.spec import TaskSpec
from tests.conftest import fixture_prices
from tests.pipeline.test_task import ScriptedProvider, code, make_env, reply

SCAR = "scar tissue: a hint"  # a free signal that opens the gate


def _verdict(*entries: tuple[int, str, str]) -> str:
    verdicts = [{"principle": n, "verdict": v, "evidence": e} for n, v, e in entries]
    return "```json\n" + json.dumps({"verdicts": verdicts}) + "\n```"


FLAG_2 = _verdict((1, "pass", ""), (2, "fail", "return a - b"), (3, "pass", ""), (4, "pass", ""))


def _judged_env(tmp_path: Path, provider: ScriptedProvider, shown=(2,), scar=True, **judge):
    env, rundir = make_env(tmp_path, provider)
    settings = {**env.loop.judge.model_dump(), "enabled": True, "shown": shown, **judge}
    loop = env.loop.model_copy(update={"judge": JudgeConfig(**settings)})
    router = replace(
        env.router, judge_tier=settings["tier"], judge_max_tokens=settings["max_tokens"]
    )
    env = replace(env, loop=loop, router=router, scar_tissue=lambda c, lang: [SCAR] if scar else [])
    return env, rundir


def _script(judge_reply: str | Completion | None = None) -> dict:
    script: dict = {("write", 1): reply(2), ("review", 1): "CLEAN", ("fix", 2): reply(5)}
    if judge_reply is not None:
        script[("judge", 2)] = judge_reply
    return script


def test_a_flag_on_a_shown_principle_adds_a_note_and_changes_nothing_else(tmp_path, spec) -> None:
    """A judged candidate that breaks a shown principle gets a note; status, best, counts and
    the shipped file are the tests' own."""
    provider = ScriptedProvider(_script(FLAG_2))
    env, _ = _judged_env(tmp_path, provider)

    result = run_task(spec, env)

    notes = [w for w in result.warnings if w.startswith("judge:")]
    assert (result.status, result.best_attempt, result.passed, result.judge) == (
        TaskStatus.PASSED,
        2,
        5,
        JudgeOutcome.FLAG,
    )
    assert provider.steps()[-1] == ("judge", 2)
    assert len(notes) == 1 and "principle 2 (no-special-cases)" in notes[0]
    assert spec.output.read_text() == code(5)


def test_a_flag_on_a_principle_not_shown_is_logged_not_noted(tmp_path, spec) -> None:
    """A flag on a principle outside `shown` reaches the event, not the summary."""
    provider = ScriptedProvider(_script(FLAG_2))
    env, _ = _judged_env(tmp_path, provider, shown=())

    with capture_logs() as logs:
        result = run_task(spec, env)

    events = [e for e in logs if e["event"] == "judge"]
    assert (result.judge, [w for w in result.warnings if w.startswith("judge:")]) == (
        JudgeOutcome.FLAG,
        [],
    )
    assert [(e["outcome"], e["flagged"], e["shown"]) for e in events] == [("flag", [2], [])]


def test_evidence_that_is_not_a_line_of_the_candidate_drops_the_verdict(tmp_path, spec) -> None:
    """A fail quoting a line the candidate does not hold is thrown away: the task is approved."""
    made_up = _verdict(
        (1, "fail", "import legacy"), (2, "pass", ""), (3, "pass", ""), (4, "pass", "")
    )
    provider = ScriptedProvider(_script(made_up))
    env, _ = _judged_env(tmp_path, provider, shown=(1, 2, 3, 4))

    result = run_task(spec, env)

    assert (result.judge, result.warnings) == (JudgeOutcome.APPROVE, (SCAR,))


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("Looks fine, principle 2 maybe.", JudgeOutcome.PARSE_ERROR),
        (
            '{"verdicts": [{"principle": 2, "verdict": "fail", "evidence": "x"}]}',
            JudgeOutcome.PARSE_ERROR,
        ),
        (
            Completion("", Usage(10, 0, 0, 4096), StopReason.MAX_TOKENS, "m", "sim"),
            JudgeOutcome.ERROR,
        ),
    ],
)
def test_a_malformed_or_cut_verdict_fails_open(tmp_path, spec, answer, outcome) -> None:
    """Prose, a verdict missing principles, or a reply cut at max_tokens: an outcome, not a
    crash, and the task is what its tests made it."""
    provider = ScriptedProvider(_script(answer))
    env, _ = _judged_env(tmp_path, provider)

    result = run_task(spec, env)

    assert (result.status, result.best_attempt, result.judge) == (TaskStatus.PASSED, 2, outcome)


def test_a_provider_fault_in_the_judge_fails_open(tmp_path, spec) -> None:
    """A judge call that fails is the outcome `error`; the task still passes."""

    class Failing(ScriptedProvider):
        def complete(self, request):
            if request.step == "judge":
                self.requests.append(request)
                raise ProviderError(ErrorKind.FATAL, "bad request", provider="sim")
            return super().complete(request)

    env, _ = _judged_env(tmp_path, Failing(_script()))

    result = run_task(spec, env)

    assert (result.status, result.judge) == (TaskStatus.PASSED, JudgeOutcome.ERROR)


def test_a_refused_key_on_the_judges_route_fails_open_and_the_night_goes_on(tmp_path, spec) -> None:
    """A 401 on the judge's call is the outcome `error`: the run is not halted, no stop is
    set, and the next task's calls are still made; a later judge call on that key is not
    sent again."""

    class RefusesJudge(ScriptedProvider):
        def complete(self, request):
            if request.step == "judge":
                self.requests.append(request)
                raise AuthenticationError(ErrorKind.AUTH, "invalid x-api-key", 401, provider="sim")
            return super().complete(request)

    provider = RefusesJudge(_script())
    env, _ = _judged_env(tmp_path, provider)

    first = run_task(spec, env)
    provider.requests.clear()
    second = run_task(replace(spec, id="calc2"), env)

    assert (first.status, first.judge, second.status, second.judge) == (
        TaskStatus.PASSED,
        JudgeOutcome.ERROR,
        TaskStatus.PASSED,
        JudgeOutcome.ERROR,
    )
    assert env.caller.halt_reason is None
    assert [s for s, _ in provider.steps()] == ["write", "review", "fix"]


def test_the_gate_stays_shut_without_a_signal_or_below_full_visible_passes(tmp_path, spec) -> None:
    """No free signal, or a best that fails a visible test: zero judge calls, outcome skipped."""
    quiet = ScriptedProvider(_script(FLAG_2))
    env, _ = _judged_env(tmp_path / "a", quiet, scar=False)
    partial = ScriptedProvider(
        {("write", 1): reply(3), ("review", 1): "CLEAN", ("fix", 2): reply(3)}
    )
    env_partial, _ = _judged_env(tmp_path / "b", partial)
    env_partial = replace(
        env_partial, loop=env_partial.loop.model_copy(update={"stop_after_no_improvement": 1})
    )

    results = [run_task(spec, env), run_task(spec, env_partial)]

    assert [r.judge for r in results] == [JudgeOutcome.SKIPPED, JudgeOutcome.SKIPPED]
    assert [s for p in (quiet, partial) for s, _ in p.steps() if s == "judge"] == []


def test_disabled_means_zero_judge_calls_and_the_same_requests(tmp_path, spec) -> None:
    """Off (the shipped default), no judge call is made, the result has no judge field, and
    every other request is byte for byte what a judged night sends."""
    off = ScriptedProvider(_script())
    env_off, _ = make_env(tmp_path / "off", off)
    env_off = replace(env_off, scar_tissue=lambda c, lang: [SCAR])
    on = ScriptedProvider(_script(FLAG_2))
    env_on, _ = _judged_env(tmp_path / "on", on)

    result = run_task(spec, env_off)
    run_task(spec, env_on)

    assert env_off.loop.judge.enabled is False
    assert (result.judge, "judge" in result.to_json()) == (None, False)
    assert off.requests == [r for r in on.requests if r.step != "judge"]


def test_the_judge_call_is_paid_from_the_budget_and_never_past_its_cap(tmp_path, spec) -> None:
    """The judge's call is in the task's cost; a cap that leaves no room for its worst case
    (here a frontier judge with a long reply: $1.28 of output) means no call, outcome
    skipped, nothing spent past the cap, and the run not stopped."""
    free = ScriptedProvider(_script(FLAG_2))
    env, _ = _judged_env(tmp_path / "paid", free)
    paid = run_task(spec, env)
    before_judge = ScriptedProvider(_script())
    env_off, _ = make_env(tmp_path / "off", before_judge)
    unjudged = run_task(spec, env_off)
    capped = ScriptedProvider(_script(FLAG_2))
    env_capped, _ = _judged_env(tmp_path / "capped", capped, tier="frontier", max_tokens=64000)
    budget = Budget(cap_run=Decimal("0.9"))  # fits a mid write or fix ($0.32 of output), not that
    rundir = RunDir(tmp_path / "capped-runs", "r1")
    env_capped = replace(
        env_capped, caller=Caller({"sim": capped}, fixture_prices(), budget, rundir)
    )

    tight = run_task(spec, env_capped)

    assert paid.cost_usd > unjudged.cost_usd == env_off.caller.spent_task(spec.id)
    assert paid.cost_usd == env.caller.spent_task(spec.id)
    assert (tight.judge, tight.status, ("judge", 2) in capped.steps()) == (
        JudgeOutcome.SKIPPED,
        TaskStatus.PASSED,
        False,
    )
    assert (budget.spent_run <= budget.cap_run, budget.stopped) == (True, False)


def test_the_outcome_reaches_summary_json_and_the_metric(tmp_path, spec) -> None:
    """summary.json's task carries `judge`, and harness_judge_outcome_total counts it."""
    provider = ScriptedProvider(_script(FLAG_2))
    env, _ = _judged_env(tmp_path, provider)
    result = run_task(spec, env)
    summary = {
        "status": "completed",
        "budget": {"cap_usd": 1.0, "spent_usd": 0.1},
        "started_at": "2026-01-01T00:00:00+00:00",
        "finished_at": "2026-01-01T01:00:00+00:00",
        "tasks": [result.to_json()],
    }

    text = render_metrics(summary)

    assert result.to_json()["judge"] == "flag"
    assert 'harness_judge_outcome_total{outcome="flag"} 1' in text.splitlines()
    assert 'harness_judge_outcome_total{outcome="approve"} 0' in text.splitlines()


_LINES = ["def add(a, b):", "return a + b", "return a - b", "PASSES = 5", "import legacy", ""]
_ENTRY = st.tuples(st.sampled_from(["pass", "fail"]), st.sampled_from(_LINES))
_REPLY = st.one_of(
    st.lists(_ENTRY, min_size=4, max_size=4).map(
        lambda es: _verdict(*[(i + 1, v, e) for i, (v, e) in enumerate(es)])
    ),
    st.text(max_size=200),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    passes=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=4),
    answer=_REPLY,
)
def test_any_verdict_ships_the_best_score_and_changes_no_status(
    spec: TaskSpec, passes, answer
) -> None:
    """For any attempt scores and any judge reply, the judged task ships the best-scoring
    candidate and has the status, best attempt and counts of the same task unjudged."""
    script: dict = {("write", 1): reply(passes[0]), ("review", 1): "CLEAN"}
    script.update({("fix", n + 1): reply(p) for n, p in enumerate(passes[1:], start=1)})
    script.update({("judge", n): answer for n in range(1, len(passes) + 1)})
    spec = replace(spec, max_attempts=len(passes))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env_off, _ = make_env(root / "off", ScriptedProvider(script))
        env_off = replace(env_off, scar_tissue=lambda c, lang: [SCAR])
        env_on, _ = _judged_env(root / "on", ScriptedProvider(script), shown=(1, 2, 3, 4))

        off = run_task(replace(spec, output=root / "off.py"), env_off)
        on = run_task(replace(spec, output=root / "on.py"), env_on)
        shipped = (root / "on.py").read_text() if on.output else None

    best = max(passes)
    assert (on.status, on.best_attempt, on.passed, on.failed) == (
        off.status,
        off.best_attempt,
        off.passed,
        off.failed,
    )
    assert on.passed == best
    assert shipped == (code(best) if best > 0 else None)


def test_a_test_literal_compared_in_the_code_opens_the_gate(tmp_path, spec) -> None:
    """With no warning at all, a candidate comparing a literal its tests use is judged."""
    tests = tmp_path / "acceptance" / "test_special.py"
    tests.write_text("from calc_service import add\n\ndef test_big():\n    assert add(12345, 1)\n")
    special = code(5).replace(
        "def add(a, b):\n", "def add(a, b):\n    if a == 12345:\n        return 7\n"
    )
    provider = ScriptedProvider(
        {("write", 1): f"```python\n{special}```", ("review", 1): "CLEAN", ("judge", 1): FLAG_2}
    )
    env, _ = _judged_env(tmp_path, provider, scar=False)

    result = run_task(replace(spec, tests=(tests,)), env)

    assert compared_test_literals(special, [tests.read_text()]) == [12345]
    assert (result.judge, provider.steps()[-1]) == (JudgeOutcome.FLAG, ("judge", 1))


def test_a_fault_inside_the_judge_is_its_outcome_not_the_tasks(tmp_path, spec) -> None:
    """An unexpected fault while judging (here: the judge's template cannot render) is the
    outcome `error`; the task keeps the status its tests gave it."""
    provider = ScriptedProvider(_script(FLAG_2))
    env, _ = _judged_env(tmp_path, provider)
    shipped = env.prompts["service_port"]

    class Broken:
        principles = shipped.principles

        def render(self, step, variables):
            if step == "judge":
                raise RuntimeError("template exploded")
            return shipped.render(step, variables)

    env = replace(env, prompts={"service_port": Broken()})

    result = run_task(spec, env)

    assert (result.status, result.best_attempt, result.judge) == (
        TaskStatus.PASSED,
        2,
        JudgeOutcome.ERROR,
    )
