"""Many tasks: start-up checks, the worker pool, the one catch-all per task, the summary."""

from __future__ import annotations

import datetime as dt
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from decimal import Decimal

import structlog

from harness.errors import ExitCode
from harness.fsio import remove_stale_temps, write_refused
from harness.llm import AuthenticationError, ProviderError
from harness.log import scrub
from harness.pipeline import TaskFault, run_task
from harness.report import RunSummary, write_summary
from harness.results import ReviewOutcome, RunStatus, StopCause, TaskResult, TaskStatus
from harness.runner.batch.report import batch_notes, batch_report
from harness.runner.batch.start import start_batch
from harness.runner.carryover import FILTERED, already_done, prior, skipped
from harness.runner.prepared import Run
from harness.tasks import TaskSpec

__all__ = ["execute", "exit_code"]

log = structlog.get_logger()


def _run_one(run: Run, spec: TaskSpec) -> TaskResult:
    """One task, start to recorded result; nothing it raises escapes to the pool."""
    if run.parts.stop.is_set() or run.parts.budget.stopped:
        return _not_run(run, spec)
    with structlog.contextvars.bound_contextvars(run_id=run.parts.rundir.run_id, task_id=spec.id):
        result, started = _attempt_task(run, spec)
        if run.parts.deliver is not None:
            result = run.parts.deliver.task_done(result)
        if run.parts.budget.stopped:
            run.parts.stop.set()
        try:
            run.parts.store.record_task(run.parts.rundir.run_id, result, run.plan.digests[spec.id])
        except Exception as exc:  # the result stands in the summary even if the store fails
            log.error("task_record_failed", error=repr(exc))
            if write_refused(exc):
                run.parts.env.caller.halt_records(exc)
        if not started:  # done before (resume, up to date): its task_finished is logged
            return result
        # Logged once recorded: a kill after this line leaves a task a resume will not redo.
        log.info(
            "task_finished",
            status=result.status.value,
            passed=result.passed,
            total=result.total,
            cost_usd=str(result.cost_usd),
            reason=result.reason,
        )
        return result


def _run_in_rounds(run: Run, spec: TaskSpec) -> TaskResult:
    """One task, counted among the running tasks a batch round waits for."""
    rounds = run.parts.rounds
    assert rounds is not None
    rounds.enter(spec.id)
    try:
        return _run_one(run, spec)
    finally:
        rounds.leave(spec.id)


def _not_run(run: Run, spec: TaskSpec) -> TaskResult:
    """A task the run stopped before it started: why, for a person and for a resume."""
    halt = run.parts.env.caller.halt_reason
    if halt is not None:
        return skipped(spec, halt, StopCause.HALTED)
    if run.parts.budget.refusal is not None:
        return skipped(spec, f"budget: {run.parts.budget.refusal}", StopCause.BUDGET)
    return skipped(spec, "interrupted", StopCause.RUN_STOPPED)


def _faulted(run: Run, result: TaskResult, cause: BaseException | None) -> TaskResult:
    """Classify what ended a task; refused credentials stop the whole run, once."""
    stop = None
    if isinstance(cause, AuthenticationError):  # the Caller has already halted the run
        log.error("authentication_failed", error=str(cause))
        reason, stop = f"run halted: {cause}", StopCause.HALTED
    elif isinstance(cause, ProviderError):
        log.error("task_provider_error", error=str(cause))
        reason = f"provider: {cause}"
        if cause is run.parts.env.caller.unusable:  # this failure halted the run
            stop = StopCause.HALTED
    elif write_refused(cause):  # the disk refused a record: no call may go unrecorded
        run.parts.env.caller.halt_records(cause)
        reason, stop = run.parts.env.caller.halt_reason or f"run halted: {cause}", StopCause.HALTED
    else:
        tb = "".join(traceback.format_exception(cause)) if cause else ""
        log.error("task_crashed", error=repr(cause), traceback=tb)
        reason = f"harness fault: {cause!r}"
    return replace(result, status=TaskStatus.ERROR, reason=scrub(reason), cause=stop)


def _errored(run: Run, spec: TaskSpec, reason: str) -> TaskResult:
    """A task a fault ended: what it spent still shows (the ledger knows, even mid-attempt)."""
    return TaskResult(
        spec.id, TaskStatus.ERROR, reason, cost_usd=run.parts.budget.spent_task(spec.id)
    )


def _attempt_task(run: Run, spec: TaskSpec) -> tuple[TaskResult, bool]:
    """The one catch-all: known failures map to a status, unknown ones are logged and recorded.
    (result, whether the task started here) — a task done before is not started again."""
    try:
        done = already_done(run, spec)
        if done is not None:
            log.info("task_skipped", reason=done.reason, status=done.status.value)
            return done, False
        log.info("task_started")
        for temp in remove_stale_temps(spec.output):
            log.warning("stale_temp_removed", path=str(temp))
        result = run_task(spec, run.parts.env, prior(run, spec))
    except TaskFault as fault:
        result = _faulted(run, fault.result, fault.__cause__)
    except Exception as exc:
        result = _faulted(run, _errored(run, spec, ""), exc)
    return result, True


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[list[int]]:
    """SIGINT/SIGTERM stop new calls; in-flight work settles and the summary is written."""
    received: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        received.append(signum)
        stop.set()
        log.warning("stop_requested", signal=signal.Signals(signum).name)

    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _status(run: Run, interrupted: bool) -> RunStatus:
    if run.parts.env.caller.halt_reason is not None:
        return RunStatus.HALTED
    if run.parts.budget.stopped:
        return RunStatus.BUDGET_STOPPED
    return RunStatus.INTERRUPTED if interrupted else RunStatus.COMPLETED


def execute(run: Run, clock: Callable[[], dt.datetime] | None = None) -> RunSummary:
    """Run every task on the pool and write the summary, whatever happens."""
    now = clock or (lambda: dt.datetime.now().astimezone())
    started = run.plan.started_at or now()
    results: dict[str, TaskResult] = {}
    log.info(
        "run_started",
        run_id=run.parts.rundir.run_id,
        tasks=len(run.plan.tasks),
        provider=run.plan.provider,
        cap_usd=str(run.parts.budget.cap_run) if run.parts.budget.cap_run is not None else None,
        spent_usd=str(run.parts.budget.spent_run),  # earlier sessions' spend, on a resume
    )
    with _stop_on_signals(run.parts.stop) as received:
        try:
            _drain(run, results)
        finally:  # the pool has drained: nothing spends or ships after this summary
            summary = _summarise(run, results, started, now(), bool(received))
            summary = _record_summary(run, summary)
            log.info("run_finished", status=summary.status.value, spent_usd=str(summary.spent_usd))
    return summary


def _record_summary(run: Run, summary: RunSummary) -> RunSummary:
    """Write the summary and mark the run finished. A disk that refuses them halts the night:
    the summary returned (printed, and the exit code) says so, the console being its only
    record left."""
    try:
        run.closing.after_summary(write_summary(run.parts.rundir.root, summary))
    except Exception as exc:
        if not write_refused(exc):
            raise
        run.parts.env.caller.halt_records(exc)
        if summary.status is RunStatus.HALTED:  # its notes say why already
            return summary
        return replace(summary, status=RunStatus.HALTED, notes=_halt_notes(run) + summary.notes)
    return summary


def _drain(run: Run, results: dict[str, TaskResult]) -> None:
    """Run every task on the pool and wait for all of them, whatever one of them raises.
    In batch mode a task whose write is out in a batch joins the pool once it is settled."""
    rounds, workers = run.parts.rounds, run.plan.concurrency
    if rounds is not None:  # a round takes every task's next request: all tasks in flight
        workers = max(workers, len(run.plan.tasks))
    with ThreadPoolExecutor(workers) as pool:
        waiting = start_batch(run)
        futures = {
            s.id: pool.submit(_run_in_rounds if rounds else _run_one, run, s)
            for s in run.plan.tasks
            if s.id not in waiting
        }
        if run.parts.batch is not None and waiting:
            specs = {s.id: s for s in run.plan.tasks}
            poller = threading.Thread(target=run.parts.batch.poll, name="batch-poll", daemon=True)
            poller.start()
            for task_id in run.parts.batch.arrivals():
                futures[task_id] = pool.submit(_run_one, run, specs[task_id])
            poller.join()
        for task_id in [s.id for s in run.plan.tasks if s.id in futures]:
            future = futures[task_id]
            try:
                results[task_id] = future.result()
            except BaseException as exc:  # _run_one catches everything; this is the backstop
                run.parts.stop.set()
                log.error("task_lost", task_id=task_id, error=repr(exc))


def _summarise(
    run: Run, results: dict[str, TaskResult], started, finished, interrupted: bool
) -> RunSummary:
    tasks = tuple(results.get(s.id) or _not_run(run, s) for s in run.plan.tasks)
    tasks += tuple(skipped(s, FILTERED, StopCause.FILTERED) for s in run.plan.filtered)
    if run.parts.deliver is not None:
        tasks = run.parts.deliver.night_done(tasks)
    batch = batch_report(run.parts.store.batch_log(run.parts.rundir.run_id).batches())
    return RunSummary(
        run_id=run.parts.rundir.run_id,
        started_at=started,
        finished_at=finished,
        status=_status(run, interrupted),
        provider=run.plan.provider,
        cap_usd=run.parts.budget.cap_run,
        spent_usd=Decimal(run.parts.budget.spent_run),
        tasks=tasks,
        notes=_halt_notes(run)
        + run.closing.notes
        + _review_notes(tasks)
        + _fallback_notes(tasks)
        + batch_notes(batch),
        batch=batch,
    )


def _halt_notes(run: Run) -> tuple[str, ...]:
    """What halted the run and what a person must do before the next night."""
    caller = run.parts.env.caller
    reason = caller.halt_reason
    if reason is None:
        return ()
    if caller.halted is not None:
        todo = (
            "No call was sent after this refusal; every task it stopped is listed below. "
            "Fix the key or the account"
        )
    elif caller.records_lost is not None:
        todo = f"No call was sent after it. Free space under {run.parts.rundir.base}"
    else:
        todo = "Check the network, the gateway and the *_BASE_URL variables"
    resume = (
        f"`harness run {run.plan.task_list or 'TASKS.yaml'} --run-dir {run.parts.rundir.base} "
        f"--resume {run.parts.rundir.run_id}`"
    )
    return (f"{reason}. {todo}, then finish this night with {resume}",)


def _review_notes(results) -> tuple[str, ...]:
    """Reviews that were neither CLEAN nor a list counted as clean (fail open): say how many."""
    count = sum(a.review is ReviewOutcome.UNPARSEABLE for r in results for a in r.attempts)
    if not count:
        return ()
    return (f"{count} review(s) were unparseable and counted as CLEAN (fail open)",)


def _fallback_notes(results) -> tuple[str, ...]:
    """Steps the budget sent to a cheaper tier than the one they asked for: say which."""
    where = [
        f"{r.id} attempt {a.n} ({fallback})"
        for r in results
        for a in r.attempts
        for fallback in a.fallbacks
    ]
    if not where:
        return ()
    return (
        f"{len(where)} call(s) ran on a cheaper tier because the budget left could not fit the "
        f"worst case of the tier asked for: {', '.join(where)}; raise the cap or lower that "
        "route's max_tokens to keep them on it",
    )


def exit_code(summary: RunSummary) -> ExitCode:
    """The contract's exit codes for cron."""
    if summary.status is RunStatus.HALTED:
        return ExitCode.HALTED
    if summary.status is RunStatus.INTERRUPTED:
        return ExitCode.INTERRUPTED
    if summary.status is RunStatus.BUDGET_STOPPED:
        return ExitCode.BUDGET
    passing = all(_passing(t) for t in summary.tasks)
    return ExitCode.OK if passing else ExitCode.NOT_ALL_PASSED


_NOTHING_TO_DO = (StopCause.UP_TO_DATE, StopCause.FILTERED)


def _passing(task: TaskResult) -> bool:
    return task.status is TaskStatus.PASSED or (
        task.status is TaskStatus.SKIPPED and task.cause in _NOTHING_TO_DO
    )
