"""The per-task attempt loop, readable top to bottom: write → review → rewrite, then fixes."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import structlog

from harness.budget import BudgetExceeded
from harness.calls import RunStopped
from harness.extract import extract_code, required_names_from_tests
from harness.fsio import write_atomic
from harness.guardrails import GuardrailError
from harness.prompts import task_context
from harness.providers.base import CallRequest, Completion, StopReason
from harness.results import AttemptRecord, TaskResult, TaskStatus, sha256
from harness.review import parse_review
from harness.rundir import TaskFiles
from harness.taskenv import GuardrailStop, Prior, TaskEnv
from harness.taskspec import TaskSpec
from harness.testresult import TestResult
from harness.tracker import BestTracker

__all__ = ["GuardrailStop", "Prior", "TaskEnv", "run_task"]

log = structlog.get_logger()


@dataclass
class _Attempt:
    """What one attempt produced before its tests ran."""

    kind: str
    code: str | None = None
    reason: str | None = None
    cost: Decimal = Decimal(0)
    tier: str = ""
    review: str | None = None


@dataclass
class _Task:
    """Per-task state the loop threads through its stages."""

    spec: TaskSpec
    env: TaskEnv
    context: dict[str, Any]
    required: frozenset[str]
    files: TaskFiles
    tracker: BestTracker = field(default_factory=BestTracker)
    records: list[AttemptRecord] = field(default_factory=list)
    non_improving_fixes: int = 0
    since_best: int = 0
    spent: Decimal = Decimal(0)

    def call(self, step: str, attempt: int, extra: dict[str, Any], tier: str | None = None):
        route = self.env.router.route(step, self.non_improving_fixes if step == "fix" else 0)
        prompt = self.env.prompts[self.spec.type].render(step, {**self.context, **extra})
        request = CallRequest(route, prompt, self.spec.id, step, attempt)
        priced = self.env.caller.call(request)
        self.spent += priced.cost_usd
        return priced.completion, priced.cost_usd, route.tier


def _code_from(completion: Completion, required: frozenset[str]) -> tuple[str | None, str | None]:
    """(code, None) or (None, reason): outcome-like replies never become files."""
    if completion.stop_reason is not StopReason.END:
        detail = f": {completion.detail}" if completion.detail else ""
        return None, f"reply ended with {completion.stop_reason.value}{detail}"
    extraction = extract_code(completion.text, required)
    return extraction.code, extraction.reason


def _write(task: _Task, n: int, with_review: bool) -> _Attempt:
    completion, spent, tier = task.call("write", n, {})
    code, reason = _code_from(completion, task.required)
    attempt = _Attempt("write", code, reason, spent, tier)
    if code is None or not with_review:
        return attempt
    return _review_and_rewrite(task, n, attempt)


def _review_and_rewrite(task: _Task, n: int, draft: _Attempt) -> _Attempt:
    completion, spent, _ = task.call("review", n, {"code": draft.code})
    draft.cost += spent
    review = parse_review(completion.text if completion.stop_reason is StopReason.END else None)
    if not review.parsed:
        log.warning("review_unparseable", attempt=n)
        draft.review = "unparseable"
        return draft
    if review.clean:
        draft.review = "clean"
        return draft
    draft.review = "violations"
    log.info("review_violations", attempt=n, count=len(review.violations))
    completion, spent, _ = task.call(
        "rewrite", n, {"code": draft.code, "violations": list(review.violations)}
    )
    draft.cost += spent
    code, reason = _code_from(completion, task.required)
    if code is None:
        log.warning("rewrite_discarded", attempt=n, reason=reason)
        return draft
    draft.code = code
    return draft


def _fix(task: _Task, n: int) -> _Attempt:
    best = task.tracker.best
    current = task.files.read_working()  # the best code, put back on disk after any regression
    failing = [
        {"nodeid": c.nodeid, "outcome": c.outcome.value, "message": c.message, "details": c.details}
        for c in best.result.failing()
    ]
    extra = {
        "code": current,
        "failures": failing,
        "passed": best.result.passed,
        "total": best.result.total,
    }
    completion, spent, tier = task.call("fix", n, extra)
    code, reason = _code_from(completion, task.required)
    return _Attempt("fix", code, reason, spent, tier)


def _evaluate(task: _Task, n: int, attempt: _Attempt) -> AttemptRecord:
    """Run the tests on a candidate, update the ratchet, revert the working copy on regression."""
    base = dict(
        n=n, kind=attempt.kind, cost_usd=attempt.cost, tier=attempt.tier, review=attempt.review
    )
    if attempt.code is None:
        task.files.save_candidate(n, None, attempt.reason)
        record = AttemptRecord(**base, extraction_error=attempt.reason)
        task.env.record_attempt(task.spec.id, record, None, None)
        return record
    task.files.save_candidate(n, attempt.code, None)
    violations = task.env.check_code(attempt.code)
    if violations:
        raise GuardrailStop(f"attempt {n}: " + "; ".join(violations))
    result = task.env.run_tests(task.spec, attempt.code)
    regressed = task.tracker.is_regression(result)
    improved = task.tracker.update(n, attempt.code, result)
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
        passed=result.passed,
        failed=result.failed,
        errors=result.errors,
        total=result.total,
        regressed=regressed,
        improved=improved,
        tampered=result.tampered,
        test_error=result.error,
    )
    task.env.record_attempt(task.spec.id, record, attempt.code, result)
    return record


def _next_attempt(task: _Task, n: int) -> _Attempt:
    if task.tracker.best is None:
        return _write(task, n, with_review=(n == 1))
    return _fix(task, n)


def _stop_reason(task: _Task) -> str | None:
    best = task.tracker.best
    if best is not None and best.result.all_passed:
        return "all tests pass"
    # Without any scored attempt there is nothing to improve on: only max_attempts bounds it.
    if best is not None and task.since_best >= task.env.loop.stop_after_no_improvement:
        return f"no improvement in {task.since_best} attempts"
    return None


def _count(task: _Task, record: AttemptRecord) -> None:
    """Fold one finished attempt into the counters that drive stopping and escalation."""
    task.records.append(record)
    task.since_best = 0 if record.improved else task.since_best + 1
    if record.kind == "fix":
        task.non_improving_fixes = 0 if record.improved else task.non_improving_fixes + 1


def _restore(task: _Task, prior: Prior) -> None:
    """Start from an earlier night's best, then replay this run's finished attempts."""
    if prior.seed is not None:
        task.tracker.update(0, prior.seed.code, prior.seed.result)
    for stored in prior.attempts:
        if stored.code is not None and stored.result is not None:
            task.tracker.update(stored.record.n, stored.code, stored.result)
        _count(task, stored.record)
    if task.tracker.best is not None:
        task.files.write_working(task.tracker.best.code)
    task.spent = prior.spent


def _loop(task: _Task) -> str:
    first = task.records[-1].n + 1 if task.records else 1
    stop = _stop_reason(task) if task.tracker.best else None
    if stop:
        return stop
    for n in range(first, task.spec.max_attempts + 1):
        record = _evaluate(task, n, _next_attempt(task, n))
        _count(task, record)
        log.info("attempt_finished", **record.to_json())
        stop = _stop_reason(task)
        if stop:
            return stop
    return f"{task.spec.max_attempts} attempts used"


def run_task(spec: TaskSpec, env: TaskEnv, prior: Prior | None = None) -> TaskResult:
    """Run one task's attempts and ship its best candidate. Known stops become statuses;
    anything else propagates to the runner's one catch-all."""
    sources = [p.read_text() for p in spec.tests]
    required = required_names_from_tests(sources, spec.module_name)
    task = _Task(
        spec, env, task_context(spec, tuple(sorted(required))), required, env.workdir(spec)
    )
    _restore(task, prior or Prior())
    status: TaskStatus | None = None
    try:
        reason = _loop(task)
    except (GuardrailStop, GuardrailError) as exc:
        status, reason = TaskStatus.GUARDRAIL, str(exc)
    except BudgetExceeded as exc:
        reason = f"budget: {exc}"
    except RunStopped as exc:
        reason = str(exc)
    return _ship(task, status, reason)


def _ship(task: _Task, status: TaskStatus | None, reason: str) -> TaskResult:
    """Write the best candidate atomically to the output path and summarise the task."""
    spec, env, best = task.spec, task.env, task.tracker.best
    output, warnings = None, []
    if best is not None:
        problem = env.check_write(spec.output)
        if problem:
            status, reason = TaskStatus.GUARDRAIL, problem
        else:
            write_atomic(spec.output, best.code)
            output = str(spec.output)
            warnings = env.scar_tissue(best.code)
    result = best.result if best else None
    if status is None:
        status = _status(result)
    return TaskResult(
        id=spec.id,
        status=status,
        reason="" if status is TaskStatus.PASSED else reason,
        best_attempt=best.attempt if best else None,
        passed=result.passed if result else 0,
        failed=result.failed if result else 0,
        errors=result.errors if result else 0,
        total=result.total if result else 0,
        cost_usd=task.spent,
        output=output,
        attempts=tuple(task.records),
        warnings=tuple(warnings),
        output_sha256=sha256(best.code) if output else None,
    )


def _status(result: TestResult | None) -> TaskStatus:
    if result is None or result.passed == 0:
        return TaskStatus.FAILED
    return TaskStatus.PASSED if result.all_passed else TaskStatus.PARTIAL
