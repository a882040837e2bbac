"""The per-task attempt loop, readable top to bottom: write → review → rewrite, then fixes."""

from __future__ import annotations

from dataclasses import replace

import structlog

from harness.budget import BudgetExceeded
from harness.calls import RunStopped
from harness.extract import is_edit_refusal
from harness.fsio import write_atomic
from harness.guardrails import GuardrailError
from harness.pipeline.background import Background
from harness.pipeline.env import GuardrailStop, Prior, TaskEnv, TaskFault
from harness.pipeline.first import task_inputs
from harness.pipeline.judge import judge_task
from harness.pipeline.steps import Attempt, TaskState, fix, write
from harness.results import (
    AttemptRecord,
    Counts,
    StopCause,
    TaskResult,
    TaskStatus,
    TestResult,
    sha256,
)
from harness.tasks import TaskSpec

__all__ = ["GuardrailStop", "Prior", "TaskEnv", "run_task"]

log = structlog.get_logger()


def run_task(spec: TaskSpec, env: TaskEnv, prior: Prior | None = None) -> TaskResult:
    """Run one task's attempts and ship its best candidate. Known stops become statuses;
    anything else propagates to the runner's one catch-all."""
    context, required = task_inputs(spec)
    task = TaskState(spec, env, context, required, env.workdir(spec), tools=env.toolbox(spec))
    task.expecting = Background(env.expect_tests, spec)
    try:
        return _run(task, prior or Prior())
    finally:  # nothing the task started outlives it
        task.expecting.join()


def _run(task: TaskState, prior: Prior) -> TaskResult:
    _restore(task, prior)
    seed = prior.seed.seed if prior.seed is not None else None
    status: TaskStatus | None = None
    cause: StopCause | None = None
    try:
        reason = _loop(task)
    except (GuardrailStop, GuardrailError) as exc:
        status, reason = TaskStatus.GUARDRAIL, str(exc)
    except BudgetExceeded as exc:
        status, reason, cause = _stopped(task), f"budget: {exc}", StopCause.BUDGET
    except RunStopped as exc:
        status, reason, cause = _stopped(task), str(exc), exc.cause
    except PromptTooLong as exc:
        status, reason, cause = None, str(exc), StopCause.CONTEXT_TOO_LONG
    except OnlyHiddenFail as exc:
        status, reason, cause = None, str(exc), StopCause.HIDDEN_ONLY
    except Exception as exc:
        # Not a stop this loop knows: ship what was already paid for, then let the runner's
        # one catch-all classify the fault (and halt the run on refused credentials).
        fault = _ship(task, TaskStatus.ERROR, f"{type(exc).__name__}: {exc}")
        raise TaskFault(replace(fault, seed=seed)) from exc
    return replace(judge_task(task, _ship(task, status, reason, cause)), seed=seed)


def _evaluate(task: TaskState, n: int, attempt: Attempt) -> AttemptRecord:
    """Run the tests on a candidate, update the ratchet, revert the working copy on regression."""
    base = dict(
        n=n,
        kind=attempt.kind,
        cost_usd=attempt.cost,
        tier=attempt.tier,
        review=attempt.review,
        fallbacks=tuple(attempt.fallbacks),
    )
    if attempt.code is None:
        task.files.save_candidate(n, None, attempt.reason)
        return _record(task, AttemptRecord(**base, extraction_error=attempt.reason), None, None)
    task.files.save_candidate(n, attempt.code, None)
    violations = task.env.check_code(attempt.code, task.spec.language)
    if violations:
        reason = f"attempt {n}: " + "; ".join(violations)
        _record(task, AttemptRecord(**base, test_error=reason), None, None)
        raise GuardrailStop(reason)
    if task.expecting is not None:  # the ids collected beside the first call: wait for them
        task.expecting.join()
    result = task.env.run_tests(task.spec, attempt.code)
    regressed = task.tracker.is_regression(result)
    # A candidate the sandbox refused to run, or one that tampered, never becomes the best:
    # it must not reach the fix prompt, the working copy or the output path.
    improved = _trusted(result) and task.tracker.update(n, attempt.code, result)
    if task.tracker.best is not None:
        task.files.write_working(task.tracker.best.code)
    if regressed:
        log.warning(
            "attempt_reverted",
            attempt=n,
            passed=result.passed,
            best_passed=task.tracker.best.result.passed,
        )
    record = AttemptRecord(
        **base,
        **Counts.of(result).fields(),
        regressed=regressed,
        improved=improved,
        tampered=result.tampered,
        test_error=result.error,
        uncarried=len(result.uncarried()),
        differential=result.differential,
    )
    return _record(task, record, attempt.code, result)


def _record(
    task: TaskState, record: AttemptRecord, code: str | None, result: TestResult | None
) -> AttemptRecord:
    """Record a finished attempt. A record that cannot be written (a full disk, a value the
    store refuses) becomes an attempt error, recorded without its code and result: the task
    goes on to its next attempt either way."""
    try:
        task.env.record_attempt(task.spec.id, record, code, result)
        return record
    except Exception as exc:  # any fault in recording is this attempt's, never the task's
        log.exception("attempt_record_failed", attempt=record.n)
        problem = f"the attempt could not be recorded ({type(exc).__name__}: {exc})"
        record = replace(record, test_error="; ".join(filter(None, [record.test_error, problem])))
    try:
        task.env.record_attempt(task.spec.id, record, None, None)
    except Exception:  # the store itself is failing: the summary still has the record
        log.exception("attempt_record_failed", attempt=record.n)
    return record


def _trusted(result: TestResult) -> bool:
    return not result.tampered and not result.rejected


def _next_attempt(task: TaskState, n: int) -> Attempt:
    if task.tracker.best is None:
        return write(task, n, with_review=(n == 1 and task.env.loop.review))
    return fix(task, n)


def _stop_reason(task: TaskState) -> str | None:
    best = task.tracker.best
    if best is not None and best.result.all_passed and _agrees(best.result):
        return "all tests pass"
    if best is not None and _only_hidden_fail(best.result):
        raise OnlyHiddenFail(best.result)
    if best is not None and not best.result.failing() and best.result.uncarried():
        # A fix prompt would show no failure: the ones left are the boundary's (warnings).
        return "only tests the value boundary could not carry a value of fail"
    # Without any scored attempt there is nothing to improve on: only max_attempts bounds it.
    if best is not None and task.since_best >= task.env.loop.stop_after_no_improvement:
        return f"no improvement in {task.since_best} attempts"
    return None


def _only_hidden_fail(result: TestResult) -> bool:
    """Hidden tests fail and no visible one does: a fix prompt would show no failure."""
    return result.hidden_passed < result.hidden_total and not result.failing()


def _count(task: TaskState, record: AttemptRecord) -> None:
    """Fold one finished attempt into the counters that drive stopping and escalation."""
    task.records.append(record)
    task.since_best = 0 if record.improved else task.since_best + 1
    if record.kind == "fix":
        task.non_improving_fixes = 0 if record.improved else task.non_improving_fixes + 1
        # A refused edit is shown to the next fix, block and all (a resume restores it too).
        refused = is_edit_refusal(record.extraction_error)
        task.edit_error = record.extraction_error if refused else None


def _restore(task: TaskState, prior: Prior) -> None:
    """Start from an earlier night's best, then replay this run's finished attempts."""
    if prior.seed is not None:  # attempt 0, kept with the rest so `best_attempt` names a file
        task.tracker.update(0, prior.seed.code, prior.seed.result)
        task.files.save_candidate(0, prior.seed.code, None)
    for stored in prior.attempts:
        if stored.code is not None and stored.result is not None and _trusted(stored.result):
            task.tracker.update(stored.record.n, stored.code, stored.result)
        _count(task, stored.record)
    if task.tracker.best is not None:
        task.files.write_working(task.tracker.best.code)


def _loop(task: TaskState) -> str:
    first = task.records[-1].n + 1 if task.records else 1
    stop = _stop_reason(task) if task.tracker.best else None
    if stop:
        return stop
    for n in range(first, task.spec.max_attempts + 1):
        attempt = _next_attempt(task, n)
        record = _evaluate(task, n, attempt)
        _count(task, record)
        log.info("attempt_finished", **record.to_json())
        if attempt.too_long:
            raise PromptTooLong(attempt.too_long)
        stop = _stop_reason(task)
        if stop:
            return stop
    return f"{task.spec.max_attempts} attempts used"


class PromptTooLong(Exception):
    """The model refused a prompt as too long: the task's attempts end here, since the next
    would send the same material again."""


class OnlyHiddenFail(Exception):
    """Every visible test passes and only hidden tests fail: a fix prompt would list no
    failure (hidden tests are never shown), so no fix is bought; a person decides."""

    def __init__(self, result: TestResult) -> None:
        failing = result.hidden_total - result.hidden_passed
        super().__init__(
            f"every visible test passes but {failing} of {result.hidden_total} hidden test(s) "
            "fail; a fix prompt would show no failure, so none was bought: check the hidden "
            "tests against the visible ones and the port"
        )


def _stopped(task: TaskState) -> TaskStatus | None:
    """A stop before the task had anything to show is a skip; after, the task ends as it is
    (None: its status follows from its best attempt). The reason is the stop's, either way."""
    if not task.records and task.tracker.best is None:
        return TaskStatus.SKIPPED
    return None


def _ship(
    task: TaskState, status: TaskStatus | None, reason: str, cause: StopCause | None = None
) -> TaskResult:
    """Write the best candidate atomically to the output path and summarise the task."""
    spec, env, best = task.spec, task.env, task.tracker.best
    output, warnings = None, []
    if best is not None and best.result.passed > 0:  # a file passing nothing helps nobody
        problem = env.check_write(spec.output)
        if problem:
            status, reason, cause = TaskStatus.GUARDRAIL, problem, None
        else:
            write_atomic(spec.output, best.code)
            output = str(spec.output)
            warnings = env.scar_tissue(best.code, spec.language)
    result = best.result if best else None
    warnings = [*warnings, *_hidden_trails(result), *_detection_guarded(spec, result)]
    warnings += _uncarried(result)
    if status is None:
        status = _status(result)
    return TaskResult(
        id=spec.id,
        status=status,
        reason="" if status is TaskStatus.PASSED else reason,
        cause=None if status is TaskStatus.PASSED else cause,
        best_attempt=best.attempt if best else None,
        **Counts.of(result).fields(),
        cost_usd=env.caller.spent_task(spec.id),
        output=output,
        attempts=tuple(task.records),
        warnings=tuple(warnings),
        output_sha256=sha256(best.code) if output else None,
        hidden_passed=result.hidden_passed if result else 0,
        hidden_total=result.hidden_total if result else 0,
        differential=result.differential if result else None,
    )


def _uncarried(result: TestResult | None) -> list[str]:
    """Tests the value boundary could not carry a value of: the suite's, not the candidate's."""
    cases = result.uncarried() if result is not None else ()
    if not cases:
        return []
    names = ", ".join(c.nodeid for c in cases[:5]) + (" ..." if len(cases) > 5 else "")
    return [
        f"the value boundary could not carry a value in {len(cases)} test(s) ({names}); they "
        "count as failed and were not sent to the model: check the values, or give the task "
        "isolation: in_process (docs/boundary.md)"
    ]


def _hidden_trails(result: TestResult | None) -> list[str]:
    """Hidden tests passing at a lower rate than the visible ones hint at special-casing."""
    if result is None or not result.hidden_total or not result.visible_total:
        return []
    hidden = result.hidden_passed / result.hidden_total
    if hidden >= result.visible_passed / result.visible_total:
        return []
    return [
        f"hidden tests trail the visible ones ({result.hidden_passed}/{result.hidden_total} vs "
        f"{result.visible_passed}/{result.visible_total}): check for special-casing"
    ]


DETECTION_GUARDED = (
    "detection-guarded, not isolated: {why}, so the candidate ran inside the test process and "
    "this verdict rests on the in-process checks, not on the value boundary (docs/boundary.md)"
)


def _detection_guarded(spec: TaskSpec, result: TestResult | None) -> list[str]:
    """A Python verdict reached with the candidate in the test process is labelled so."""
    if result is None or not result.in_process:
        return []
    why = (
        "the task says isolation: in_process"
        if spec.isolation == "in_process"
        else "isolation: boundary needs bubblewrap"
    )
    return [DETECTION_GUARDED.format(why=why)]


def _status(result: TestResult | None) -> TaskStatus:
    if result is None or result.passed == 0:
        return TaskStatus.FAILED
    found = result.differential
    if found is not None and found.required and not found.agrees:
        return TaskStatus.PARTIAL  # differential.required: passing means agreeing too
    return TaskStatus.PASSED if result.all_passed else TaskStatus.PARTIAL


def _agrees(result: TestResult) -> bool:
    """No call differs from the reference (or no check ran): the fixes may stop."""
    return result.differential is None or result.differential.differed == 0
