"""The per-task loop with a scripted provider and a scripted test runner."""

from __future__ import annotations

import re
import threading
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from harness.budget import Budget
from harness.calls.caller import Caller
from harness.config import LoopConfig, load_config
from harness.llm import CallRequest, Completion, Provider, StopReason, Usage
from harness.pipeline import TaskEnv, run_task
from harness.prompts import PromptSet, default_prompts_dir
from harness.results import Outcome, ReviewOutcome, StopCause, TaskStatus, TestCase, TestResult
from harness.router import Router
from harness.store import RunDir
from harness.tasks.spec import TaskSpec
from tests.conftest import fixture_prices

TOTAL = 5


def code(passes: int) -> str:
    body = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
    return body + f"PASSES = {passes}\n"


def reply(passes: int) -> str:
    return f"Here is the module.\n```python\n{code(passes)}```\n"


def scripted_tests(spec: TaskSpec, candidate: str) -> TestResult:
    """Pass count is whatever the candidate's PASSES constant says."""
    passes = int(re.search(r"PASSES = (\d+)", candidate).group(1))
    cases = [TestCase(f"test_calc.py::t{i}", Outcome.PASSED) for i in range(passes)]
    cases += [
        TestCase(f"test_calc.py::t{i}", Outcome.FAILED, f"AssertionError: t{i}", f"E   assert t{i}")
        for i in range(passes, TOTAL)
    ]
    return TestResult(tuple(cases), output="OUTPUT-OF-EVERY-TEST")


class ScriptedProvider(Provider):
    """Answers each (step, attempt) from a script; remembers every request."""

    name = "sim"

    def __init__(self, script: dict[tuple[str, int], str | Completion]) -> None:
        self.script = script
        self.requests: list[CallRequest] = []

    def complete(self, request: CallRequest) -> Completion:
        self.requests.append(request)
        answer = self.script[(request.step, request.attempt)]
        if isinstance(answer, Completion):
            return answer
        return Completion(
            answer, Usage(1000, 0, 0, 200), StopReason.END, request.route.model, "sim"
        )

    def steps(self) -> list[tuple[str, int]]:
        return [(r.step, r.attempt) for r in self.requests]


def make_env(tmp_path: Path, provider: ScriptedProvider, **loop) -> tuple[TaskEnv, RunDir]:
    config = load_config()
    rundir = RunDir(tmp_path / "runs", "r1")
    caller = Caller({"sim": provider}, fixture_prices(), Budget(cap_run=Decimal(100)), rundir)
    env = TaskEnv(
        caller=caller,
        router=Router.from_config(config, "sim"),
        prompts={"service_port": PromptSet(default_prompts_dir(), "service_port")},
        run_tests=scripted_tests,
        workdir=rundir.task_files,
        loop=LoopConfig(**{**config.loop.model_dump(), "stop_after_no_improvement": 5, **loop}),
    )
    return env, rundir


def test_review_runs_on_attempt_one_only_and_violations_trigger_a_rewrite(tmp_path, spec) -> None:
    """Attempt 1 is write → review → rewrite; later attempts are fixes with no review."""
    provider = ScriptedProvider(
        {
            ("write", 1): reply(1),
            ("review", 1): "- rule 4: print() used",
            ("rewrite", 1): reply(2),
            ("fix", 2): reply(3),
            ("fix", 3): reply(4),
            ("fix", 4): reply(5),
        }
    )
    env, _ = make_env(tmp_path, provider)

    result = run_task(spec, env)

    assert provider.steps() == [
        ("write", 1),
        ("review", 1),
        ("rewrite", 1),
        ("fix", 2),
        ("fix", 3),
        ("fix", 4),
    ]
    assert [a.passed for a in result.attempts] == [2, 3, 4, 5]
    assert result.status is TaskStatus.PASSED
    assert result.attempts[0].review == "violations"


def test_clean_review_skips_the_rewrite(tmp_path, spec) -> None:
    """A CLEAN review sends the draft straight to the tests."""
    provider = ScriptedProvider({("write", 1): reply(5), ("review", 1): "CLEAN"})
    env, _ = make_env(tmp_path, provider)

    result = run_task(spec, env)

    assert provider.steps() == [("write", 1), ("review", 1)]
    assert (result.status, result.best_attempt, result.reason) == (TaskStatus.PASSED, 1, "")


def test_regression_is_reverted_and_the_next_fix_starts_from_the_best(tmp_path, spec) -> None:
    """After a regression the best code is back on disk and in the next fix prompt."""
    provider = ScriptedProvider(
        {
            ("write", 1): reply(2),
            ("review", 1): "CLEAN",
            ("fix", 2): reply(4),
            ("fix", 3): reply(1),
            ("fix", 4): reply(3),
            ("fix", 5): reply(2),
        }
    )
    env, rundir = make_env(tmp_path, provider)

    result = run_task(spec, env)

    fixes = [r for r in provider.requests if r.step == "fix"]
    assert (
        f"```python\n{code(4)}```" in fixes[2].prompt.variable
    )  # attempt 4, after attempt 3 regressed
    assert f"```python\n{code(4)}```" in fixes[3].prompt.variable
    assert [a.regressed for a in result.attempts] == [False, False, True, True, True]
    assert (result.best_attempt, result.passed) == (2, 4)
    assert spec.output.read_text() == code(4)
    assert rundir.task_files(spec).read_working() == code(4)
    assert (rundir.root / "attempts/calc/3.py").read_text() == code(1)


def test_fix_prompt_carries_only_the_failing_tests(tmp_path, spec) -> None:
    """Failing tests' messages go in; passing tests and the raw run output stay out."""
    provider = ScriptedProvider(
        {("write", 1): reply(3), ("review", 1): "CLEAN", ("fix", 2): reply(5)}
    )
    env, _ = make_env(tmp_path, provider)

    run_task(spec, env)

    fix = provider.requests[-1].prompt.variable
    assert "### test_calc.py::t3 (failed)" in fix and "### test_calc.py::t4 (failed)" in fix
    assert "test_calc.py::t0" not in fix
    assert "OUTPUT-OF-EVERY-TEST" not in fix


def test_extraction_failures_are_recorded_not_crashed_on(tmp_path, spec) -> None:
    """Prose, truncation and syntax errors become attempt outcomes; the loop goes on."""
    truncated = Completion(reply(5)[:40], Usage(10, 0, 0, 10), StopReason.MAX_TOKENS, "m", "sim")
    provider = ScriptedProvider(
        {
            ("write", 1): "Sorry, I cannot see the tests.",
            ("write", 2): truncated,
            ("write", 3): "```python\ndef add(a, b:\n```",
            ("write", 4): reply(5),
        }
    )
    env, rundir = make_env(tmp_path, provider)

    result = run_task(spec, env)

    errors = [a.extraction_error for a in result.attempts]
    assert errors[0] and "max_tokens" in errors[1] and "syntax" in errors[2] and errors[3] is None
    assert ("review", 2) not in provider.steps()
    assert result.status is TaskStatus.PASSED
    assert (rundir.root / "attempts/calc/2.rejected.txt").exists()


def test_stops_after_attempts_without_improvement(tmp_path, spec) -> None:
    """N attempts in a row without a new best end the task early."""
    provider = ScriptedProvider(
        {
            ("write", 1): reply(3),
            ("review", 1): "CLEAN",
            ("fix", 2): reply(3),
            ("fix", 3): reply(2),
        }
    )
    env, _ = make_env(tmp_path, provider, stop_after_no_improvement=2)

    result = run_task(spec, env)

    assert len(result.attempts) == 3
    assert result.reason == "no improvement in 2 attempts"
    assert result.status is TaskStatus.PARTIAL


def test_fix_escalates_to_frontier_after_a_non_improving_fix(tmp_path, spec) -> None:
    """A fix that did not improve sends the next fix to the frontier tier; improving resets it."""
    provider = ScriptedProvider(
        {
            ("write", 1): reply(1),
            ("review", 1): "CLEAN",
            ("fix", 2): reply(1),
            ("fix", 3): reply(2),
            ("fix", 4): reply(3),
            ("fix", 5): reply(3),
        }
    )
    env, _ = make_env(tmp_path, provider)
    config = tmp_path / "harness.yaml"
    config.write_text("loop: {escalate: true}\n")  # off by default
    env = replace(env, router=Router.from_config(load_config(config), "sim"))

    run_task(spec, env)

    tiers = [r.route.tier for r in provider.requests if r.step == "fix"]
    assert tiers == ["mid", "frontier", "mid", "mid"]


def test_cost_sums_every_call_of_the_task(tmp_path, spec) -> None:
    """The task's cost is the exact sum of its calls, review and rewrite included."""
    provider = ScriptedProvider(
        {("write", 1): reply(5), ("review", 1): "- x", ("rewrite", 1): reply(5)}
    )
    env, _ = make_env(tmp_path, provider)
    prices = fixture_prices()
    config = load_config()

    result = run_task(spec, env)

    def one(tier: str) -> Decimal:
        p = prices.get(config.routes[tier].model)
        return (1000 * p.input + 200 * p.output) / Decimal(1_000_000)

    assert result.cost_usd == 2 * one("mid") + one("cheap")
    assert result.attempts[0].cost_usd == result.cost_usd


def test_a_forbidden_operation_stops_the_task_before_any_test_runs(tmp_path, spec) -> None:
    """A candidate that would force-push is never run; the task ends with status guardrail."""
    from harness.guardrails import load_policy

    sneaky = (
        "import subprocess\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n"
        '    subprocess.run(["git", "push", "--for" + "ce", "origin", "main"])\n'
        "    return a - b\n\n\nPASSES = 5\n"
    )
    provider = ScriptedProvider({("write", 1): f"```python\n{sneaky}```", ("review", 1): "CLEAN"})
    env, _ = make_env(tmp_path, provider)
    policy = load_policy(None, task_list_dir=spec.base_dir)
    ran: list[str] = []
    env = replace(
        env,
        check_code=lambda code, language: [str(v) for v in policy.check_code(code, language)],
        run_tests=lambda s, code: ran.append(code) or scripted_tests(s, code),
    )

    result = run_task(spec, env)

    assert result.status is TaskStatus.GUARDRAIL
    assert "push" in result.reason
    assert ran == []
    assert result.output is None and not spec.output.exists()


def test_a_fault_mid_task_still_ships_the_best_already_paid_for(tmp_path, spec) -> None:
    """A provider failing on a later fix ends the task as a fault, but the best is shipped."""
    from harness.llm import ErrorKind, ProviderError
    from harness.pipeline import TaskFault

    class Failing(ScriptedProvider):
        def complete(self, request):
            if request.step == "fix":
                raise ProviderError(ErrorKind.FATAL, "model not found", status=404)
            return super().complete(request)

    provider = Failing({("write", 1): reply(3), ("review", 1): "CLEAN"})
    env, _ = make_env(tmp_path, provider)

    with pytest.raises(TaskFault) as info:
        run_task(spec, env)

    shipped = info.value.result
    assert (shipped.status, shipped.best_attempt, shipped.passed) == (TaskStatus.ERROR, 1, 3)
    assert spec.output.read_text() == code(3)
    assert len(shipped.attempts) == 1


def test_a_candidate_the_sandbox_refused_never_becomes_the_best(tmp_path, spec) -> None:
    """A pre-check rejection or a tampered run is recorded but never fed back or shipped."""
    provider = ScriptedProvider(
        {
            ("write", 1): reply(4).replace("PASSES", "import gc\nPASSES"),
            ("review", 1): "CLEAN",
            ("write", 2): reply(0).replace("PASSES = 0", "PASSES = 5\nFORGED = 1"),
            ("write", 3): reply(2),
        }
    )
    env, _ = make_env(tmp_path, provider)

    def judged(s, candidate):
        result = scripted_tests(s, candidate)
        if "import gc" in candidate:
            return TestResult(
                tuple(TestCase(c.nodeid, Outcome.ERROR) for c in result.cases),
                error="precheck: reaches into gc",
                rejected=True,
            )
        return replace(result, tampered=True) if "FORGED" in candidate else result

    result = run_task(replace(spec, max_attempts=3), replace(env, run_tests=judged))

    assert [a.improved for a in result.attempts] == [False, False, True]
    assert (result.best_attempt, result.passed) == (3, 2)
    assert spec.output.read_text() == code(2)
    assert result.attempts[1].tampered


def test_a_review_that_cannot_be_had_still_tests_the_paid_draft(tmp_path, spec) -> None:
    """If the cheap review fails, the draft is tested anyway and the review marked failed."""
    from harness.llm import ErrorKind, ProviderError

    class ReviewDown(ScriptedProvider):
        def complete(self, request):
            if request.step == "review":
                raise ProviderError(ErrorKind.FATAL, "bad request", status=400)
            return super().complete(request)

    env, _ = make_env(tmp_path, ReviewDown({("write", 1): reply(5)}))

    result = run_task(spec, env)

    assert (result.status, result.attempts[0].review) == (TaskStatus.PASSED, ReviewOutcome.FAILED)


def test_a_run_stop_mid_task_ends_it_as_it_is_with_its_cause(tmp_path, spec) -> None:
    """Stopped after a scored attempt, the task keeps its status and says the run stopped it."""
    stop = threading.Event()

    class StopsAfterWrite(ScriptedProvider):
        def complete(self, request):
            stop.set()
            return super().complete(request)

    provider = StopsAfterWrite({("write", 1): reply(3)})
    env, rundir = make_env(tmp_path, provider)
    budget = Budget(cap_run=Decimal(100))
    caller = Caller({"sim": provider}, fixture_prices(), budget, rundir, stop=stop)

    result = run_task(spec, replace(env, caller=caller))

    assert (
        result.status,
        result.reason,
        result.cause,
    ) == (TaskStatus.PARTIAL, "interrupted", StopCause.RUN_STOPPED)


def test_a_budget_stop_before_anything_is_a_skip_with_its_cause(tmp_path, spec) -> None:
    """A cap refusing the very first call skips the task with cause BUDGET and a reason in
    numbers: the cap, the call's worst case and which call, and what to change."""
    provider = ScriptedProvider({})
    env, rundir = make_env(tmp_path, provider)
    caller = Caller({"sim": provider}, fixture_prices(), Budget(cap_run=Decimal("0.0555")), rundir)

    result = run_task(spec, replace(env, caller=caller))

    assert (result.status, result.cause) == (TaskStatus.SKIPPED, StopCause.BUDGET)
    assert result.reason.startswith("budget: run budget cap $0.0555 reached: spent $0.00 + ")
    assert "(write on mid, 32000 output tokens)" in result.reason
    assert "raise --budget-usd to at least $0." in result.reason
    assert "lower step_max_tokens.write or routes.mid.max_tokens" in result.reason


def _too_long(detail: str = "prompt is too long: 250000 tokens > 200000 maximum") -> Completion:
    return Completion(
        "", Usage(), StopReason.CONTEXT_TOO_LONG, "claude-sonnet-5-5", "sim", 0.0, 0, detail
    )


def test_a_write_refused_as_too_long_ends_the_task_at_once(tmp_path, spec) -> None:
    """The write prompt does not fit: one request, one recorded attempt, and the task ends with
    cause context_too_long and what to change, never resending the same prompt."""
    provider = ScriptedProvider({("write", 1): _too_long()})
    env, _ = make_env(tmp_path, provider)

    result = run_task(spec, env)

    assert provider.steps() == [("write", 1)]
    assert (result.status, result.cause) == (TaskStatus.FAILED, StopCause.CONTEXT_TOO_LONG)
    assert [a.extraction_error for a in result.attempts] == [
        "reply ended with context_too_long: prompt is too long: 250000 tokens > 200000 maximum"
    ]
    assert result.reason.startswith("prompt too long: the write prompt does not fit claude-")
    assert "not sent again" in result.reason and "route write" in result.reason


def test_a_fix_refused_as_too_long_keeps_the_best_and_stops(tmp_path, spec) -> None:
    """A fix prompt (best code plus failing output) too long for the model: the task ships its
    best so far, partial, with cause context_too_long; no fix is sent after it."""
    provider = ScriptedProvider(
        {("write", 1): reply(2), ("review", 1): "CLEAN", ("fix", 2): _too_long()}
    )
    env, _ = make_env(tmp_path, provider)

    result = run_task(spec, env)

    assert provider.steps() == [("write", 1), ("review", 1), ("fix", 2)]
    assert (result.status, result.best_attempt, result.cause) == (
        TaskStatus.PARTIAL,
        1,
        StopCause.CONTEXT_TOO_LONG,
    )


def test_a_review_refused_as_too_long_is_a_failed_review_and_the_draft_is_tested(
    tmp_path, spec
) -> None:
    """No review could be had: the draft is tested as it was, review outcome FAILED."""
    provider = ScriptedProvider({("write", 1): reply(5), ("review", 1): _too_long()})
    env, _ = make_env(tmp_path, provider)

    result = run_task(spec, env)

    assert (result.status, result.attempts[0].review) == (TaskStatus.PASSED, ReviewOutcome.FAILED)


def go_code(passes: int) -> str:
    body = "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n"
    return body + f"const PASSES = {passes}\n"


def test_a_go_task_extracts_go_and_keeps_go_attempt_files(tmp_path, task_dir) -> None:
    """For language: go the go-fenced block is the candidate (a python block is no code),
    the guardrails see the language, and attempts are saved as <n>.go."""
    (task_dir / "calc").mkdir()
    test = task_dir / "calc" / "calc_test.go"
    test.write_text(
        'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) { Add(1, 2) }\n'
    )
    go_spec = TaskSpec(
        id="calc",
        base_dir=task_dir,
        reference=(task_dir / "legacy/calc.py",),
        tests=(test,),
        output=task_dir / "calc" / "calc.go",
        type="language_port",
        language="go",
        test_command=("go", "test", "-json", "./..."),
        results="go-json",
    )
    provider = ScriptedProvider(
        {
            ("write", 1): f"```python\n{code(5)}```",
            ("write", 2): "Here:\n```go\n" + go_code(3) + "```\n",
            ("fix", 3): "```go\n" + go_code(5) + "```\n",
        }
    )
    env, rundir = make_env(tmp_path, provider)
    languages: list[str] = []
    env = replace(
        env,
        prompts={"language_port": PromptSet(default_prompts_dir(), "language_port")},
        check_code=lambda code, language: languages.append(language) or [],
    )

    result = run_task(go_spec, env)

    assert result.attempts[0].extraction_error == "no go code block found"
    assert [a.passed for a in result.attempts] == [0, 3, 5]
    assert result.status is TaskStatus.PASSED
    assert languages == ["go", "go"]
    folder = rundir.root / "attempts" / "calc"
    assert sorted(p.name for p in folder.iterdir()) == ["1.rejected.txt", "2.go", "3.go"]
    assert go_spec.output.read_text() == go_code(5)


def test_a_failure_to_record_an_attempt_is_that_attempts_error_and_the_task_goes_on(
    tmp_path, spec
) -> None:
    """A store that refuses attempt 1's record makes it an attempt error; attempt 2 is made."""
    provider = ScriptedProvider(
        {("write", 1): reply(3), ("review", 1): "CLEAN", ("fix", 2): reply(5)}
    )
    env, _ = make_env(tmp_path, provider)
    recorded: list[tuple[int, str | None, bool]] = []

    def record(task_id, record, code, result) -> None:
        if code is not None and record.n == 1:
            raise ValueError("surrogates not allowed")
        recorded.append((record.n, record.test_error, result is None))

    result = run_task(spec, replace(env, record_attempt=record))

    assert (result.status, [a.n for a in result.attempts]) == (TaskStatus.PASSED, [1, 2])
    assert "could not be recorded (ValueError" in result.attempts[0].test_error
    assert [n for n, _, _ in recorded] == [1, 2] and recorded[0][2]


def test_candidate_text_that_no_store_could_hold_still_records_every_attempt(
    tmp_path, spec
) -> None:
    """Lone surrogates, NULs and a flood in a test's id, message and output reach the real
    store safely: every attempt is recorded and the next attempts are made."""
    from datetime import UTC, datetime

    from harness.store import RunParams, Store

    def hostile_tests(spec: TaskSpec, candidate: str) -> TestResult:
        clean = scripted_tests(spec, candidate)
        bad = TestCase("t.py::t\ud800\x00", Outcome.PASSED, "\udcff" * 10_000, "\x00" * 99_999)
        return TestResult((*clean.cases, bad), output="\ud800" * 3_000_000)

    provider = ScriptedProvider(
        {("write", 1): reply(3), ("review", 1): "CLEAN", ("fix", 2): reply(5)}
    )
    env, _ = make_env(tmp_path, provider)
    store = Store.open(tmp_path / "h.db")
    store.begin_run("r1", datetime.now(UTC), "sim", None, RunParams())
    env = replace(
        env,
        run_tests=hostile_tests,
        record_attempt=lambda task_id, rec, c, res: store.record_attempt(
            "r1", task_id, rec, c, res
        ),
    )

    result = run_task(spec, env)

    stored = store.load_attempts("r1", spec.id)
    assert ([a.n for a in result.attempts], [a.record.n for a in stored]) == ([1, 2], [1, 2])
    assert stored[1].result.cases[-1].nodeid == "t.py::t\\ud800\\x00"


@pytest.mark.parametrize(
    ("isolation", "in_process", "labelled"),
    [("in_process", True, "the task says isolation: in_process"), ("boundary", False, None)],
)
def test_a_verdict_reached_in_process_is_labelled_detection_guarded(
    tmp_path, spec, isolation, in_process, labelled
) -> None:
    """A result whose candidate ran in the test process carries the label, with its reason,
    in the task's warnings (summary.json, and both summaries' list); a boundary one does not."""
    provider = ScriptedProvider({("write", 1): reply(5), ("review", 1): "CLEAN"})
    env, _ = make_env(tmp_path, provider)

    def judged(s: TaskSpec, candidate: str) -> TestResult:
        return replace(scripted_tests(s, candidate), in_process=in_process)

    result = run_task(replace(spec, isolation=isolation), replace(env, run_tests=judged))

    found = [w for w in result.warnings if w.startswith("detection-guarded")]
    assert (result.status, len(found)) == (TaskStatus.PASSED, 1 if labelled else 0)
    assert labelled is None or labelled in found[0]


def test_a_comment_kept_from_the_reference_is_not_refused_as_a_placeholder(tmp_path, spec) -> None:
    """The reference says `#     ... (more datarows) ...`; a port keeping that comment is
    tested, not refused for a placeholder and sent back."""
    kept = "#     ... (more datarows) ...\n"
    (spec.reference[0]).write_text("ROWS = [\n    (1, 2),\n    " + kept + "]\n")
    provider = ScriptedProvider(
        {("write", 1): f"```python\n{kept}{code(5)}```\n", ("review", 1): "CLEAN"}
    )
    env, _ = make_env(tmp_path, provider)

    result = run_task(spec, env)

    assert (result.status, result.attempts[0].extraction_error) == (TaskStatus.PASSED, None)


def test_only_hidden_tests_failing_buys_no_fix_and_needs_a_human(tmp_path, spec) -> None:
    """Every visible test passes and a hidden one fails: a fix prompt would list no failure,
    so no fix call is made; the task ends partial with a cause the summary lists for a person."""

    def hidden_fails(spec: TaskSpec, candidate: str) -> TestResult:
        visible = tuple(TestCase(f"test_calc.py::t{i}", Outcome.PASSED) for i in range(TOTAL))
        hidden = TestCase("hidden.py::h0", Outcome.FAILED, "AssertionError", "", hidden=True)
        return TestResult((*visible, hidden), output="")

    provider = ScriptedProvider({("write", 1): reply(5), ("review", 1): "CLEAN"})
    env, _ = make_env(tmp_path, provider)
    env = replace(env, run_tests=hidden_fails)

    result = run_task(spec, env)

    assert provider.steps() == [("write", 1), ("review", 1)]
    assert (result.status, result.cause, len(result.attempts)) == (
        TaskStatus.PARTIAL,
        StopCause.HIDDEN_ONLY,
        1,
    )
    assert "hidden" in result.reason
