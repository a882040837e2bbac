"""The principle judge (`loop.judge`): after a task is shipped, a gated, cheap call that may
add a note for a person. It never changes a status, the best attempt or the shipped file.

The gate is deterministic and free: the shipped candidate passes every visible test, and a
free signal says a principle may be broken (a warning on the task: scar tissue, hidden tests
trailing the visible ones; or a literal of the tests compared in the code). Otherwise no
call. Anything unparseable, failed, stopped or refused by the budget fails open.
"""

from __future__ import annotations

import dataclasses

import structlog

from harness.budget import BudgetExceeded
from harness.calls import RunStopped
from harness.extract import parse_verdict
from harness.llm import CallRequest, ProviderError, StopReason
from harness.pipeline.steps import TaskState
from harness.prompts import Principle
from harness.pyast import compared_literals, literals
from harness.results import JudgeOutcome, TaskResult
from harness.tracker import Best

__all__ = ["compared_test_literals", "judge_task"]

log = structlog.get_logger()


def judge_task(task: TaskState, result: TaskResult) -> TaskResult:
    """`result` with the judge's outcome and, for a flag on a shown principle, a note under
    "Needs a human"; every other field as it was (the judge's spend is the task's)."""
    config = task.env.loop.judge
    if not config.enabled:
        return result
    best = task.tracker.best
    try:
        signals = _signals(task, best, result)
        if best is None or not signals:
            log.info("judge", outcome=JudgeOutcome.SKIPPED.value, why="gate shut")
            return dataclasses.replace(result, judge=JudgeOutcome.SKIPPED)
        outcome, notes = _judge(task, best, signals)
    except Exception as exc:  # a fault of the judge is never the task's: it fails open
        log.exception("judge", outcome=JudgeOutcome.ERROR.value, why=type(exc).__name__)
        outcome, notes = JudgeOutcome.ERROR, []
    return dataclasses.replace(
        result,
        judge=outcome,
        warnings=(*result.warnings, *notes),
        cost_usd=task.env.caller.spent_task(task.spec.id),
    )


def _signals(task: TaskState, best: Best | None, result: TaskResult) -> list[str]:
    """Why the judge should look, or nothing (the gate stays shut): only a shipped candidate
    that passes every visible test, and only on a free signal."""
    if best is None or result.output is None:
        return []
    tested = best.result
    if tested.visible_total == 0 or tested.visible_passed < tested.visible_total:
        return []
    signals = [f"warning: {w}" for w in result.warnings]
    if task.spec.language == "python":
        tests = [p.read_text(encoding="utf-8") for p in task.spec.tests]
        literals = compared_test_literals(best.code, tests)
        if literals:
            signals.append(f"compares test literal(s) {', '.join(map(repr, literals))}")
    return signals


def _judge(task: TaskState, best: Best, signals: list[str]) -> tuple[JudgeOutcome, list[str]]:
    """One paid call through the Caller (reserved before it is sent), read strictly."""
    spec, env = task.spec, task.env
    prompt_set = env.prompts[spec.type]
    prompt = prompt_set.render("judge", {**task.context, "code": best.code})
    route = env.router.judge_route()
    request = CallRequest(route, prompt, spec.id, "judge", best.attempt, fails_open=True)
    if not env.caller.fits(request):  # a refused reservation would stop the run: never ask
        log.info("judge", outcome=JudgeOutcome.SKIPPED.value, why="budget", signals=signals)
        return JudgeOutcome.SKIPPED, []
    try:
        completion = env.caller.call(request).completion
    except (BudgetExceeded, RunStopped) as exc:
        log.info("judge", outcome=JudgeOutcome.SKIPPED.value, why=str(exc), signals=signals)
        return JudgeOutcome.SKIPPED, []
    except ProviderError as exc:  # a refused key too: the judge's call fails open
        log.warning("judge", outcome=JudgeOutcome.ERROR.value, why=str(exc), signals=signals)
        return JudgeOutcome.ERROR, []
    if completion.stop_reason is not StopReason.END:
        why = f"reply ended with {completion.stop_reason.value}"
        log.warning("judge", outcome=JudgeOutcome.ERROR.value, why=why, signals=signals)
        return JudgeOutcome.ERROR, []
    numbers = {p.number: p for p in prompt_set.principles}
    reading = parse_verdict(completion.text, numbers, best.code)
    if reading.problem is not None:
        log.warning(
            "judge", outcome=JudgeOutcome.PARSE_ERROR.value, why=reading.problem, signals=signals
        )
        return JudgeOutcome.PARSE_ERROR, []
    outcome = JudgeOutcome.FLAG if reading.broken else JudgeOutcome.APPROVE
    shown = set(env.loop.judge.shown)
    log.info(
        "judge",
        outcome=outcome.value,
        attempt=best.attempt,
        signals=signals,
        flagged=[v.principle for v in reading.broken],
        shown=[v.principle for v in reading.broken if v.principle in shown],
        dropped=list(reading.dropped),
    )
    notes = [
        _note(numbers[v.principle], v.evidence) for v in reading.broken if v.principle in shown
    ]
    return outcome, notes


def _note(principle: Principle, evidence: str) -> str:
    return (
        f"judge: principle {principle.number} ({principle.slug}) may be broken, "
        f"see `{evidence[:200]}`; the tests pass, so a person decides"
    )


def compared_test_literals(code: str, tests: list[str]) -> list[object]:
    """Literals of the tests that the code compares something with: a hint of special-cased
    test inputs for the gate, never a verdict."""
    wanted: set[object] = set()
    for source in tests:
        wanted |= literals(source)
    return sorted(set(compared_literals(code)) & wanted, key=repr)
