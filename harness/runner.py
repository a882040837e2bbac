"""Many tasks: start-up checks, the worker pool, the one catch-all per task, the summary."""

from __future__ import annotations

import datetime as dt
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

import structlog

from harness.fsio import remove_stale_temps
from harness.pipeline import Prior, TaskEnv, run_task
from harness.providers.base import AuthenticationError, ProviderError
from harness.report import RunSummary, write_summary
from harness.results import RunStatus, TaskResult, TaskStatus, sha256
from harness.rundir import RunDir
from harness.taskspec import TaskSpec

__all__ = ["Run", "execute"]

log = structlog.get_logger()


@dataclass
class Run:
    """A prepared run: everything was checked at start-up, nothing has been spent."""

    tasks: list[TaskSpec]
    env: TaskEnv
    rundir: RunDir
    budget: object  # harness.budget.Budget
    stop: threading.Event
    provider: str
    concurrency: int
    notes: tuple[str, ...] = ()
    close: Callable[[], None] = lambda: None
    store: object | None = None  # harness.store.Store
    digests: dict[str, str] | None = None
    resumed: bool = False
    rerun: bool = False
    after_summary: Callable[[dict], None] = lambda data: None
    halt_reason: str = ""  # why the run stopped early for a reason other than budget or signal


def _skipped(spec: TaskSpec, reason: str) -> TaskResult:
    return TaskResult(id=spec.id, status=TaskStatus.SKIPPED, reason=reason)


UP_TO_DATE = "up to date"
_FINAL = (TaskStatus.PASSED, TaskStatus.PARTIAL, TaskStatus.FAILED, TaskStatus.GUARDRAIL)


def _final(result: TaskResult) -> bool:
    """A recorded result a resume keeps: it ended on its own, not because the run stopped."""
    if result.reason.startswith(("budget", "run stopping", "run stopped")):
        return False
    return result.status in _FINAL or result.reason.startswith(UP_TO_DATE)


def _file_sha256(path: Path) -> str | None:
    try:
        return sha256(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def _already_done(run: Run, spec: TaskSpec) -> TaskResult | None:
    """A result needing no work: finished earlier in this run, or up to date from a past night."""
    if run.store is None:
        return None
    done = run.store.task_results(run.rundir.run_id).get(spec.id) if run.resumed else None
    if done is not None and _final(done):
        return done
    passed_in = None if run.rerun else run.store.passed_before(spec.id, run.digests[spec.id])
    if passed_in is None or passed_in == run.rundir.run_id:
        return None
    earlier = run.store.task_results(passed_in)[spec.id]
    if earlier.output_sha256 is not None and earlier.output_sha256 == _file_sha256(spec.output):
        reason = f"{UP_TO_DATE}: passed in run {passed_in} with the same inputs"
        return replace(
            earlier, status=TaskStatus.SKIPPED, reason=reason, cost_usd=Decimal(0), attempts=()
        )
    return None


def _prior(run: Run, spec: TaskSpec) -> Prior:
    """This run's finished attempts (resume) and the best candidate of earlier nights."""
    if run.store is None:
        return Prior()
    run_id = run.rundir.run_id
    attempts = tuple(run.store.load_attempts(run_id, spec.id)) if run.resumed else ()
    spent = run.store.spent(run_id, spec.id) if run.resumed else Decimal(0)
    return Prior(attempts, _seed(run, spec), spent)


def _seed(run: Run, spec: TaskSpec):
    """Re-test an earlier night's best (no paid call); keep it only if it still passes something.

    `--rerun` asks for a fresh port, so it starts from nothing.
    """
    from harness.tracker import Best

    if run.rerun:
        return None
    earlier = run.store.best_earlier(spec.id, exclude_run=run.rundir.run_id)
    if earlier is None or run.env.check_code(earlier.code):
        return None
    result = run.env.run_tests(spec, earlier.code)
    if result.passed == 0:
        return None
    log.info("task_seeded", from_run=earlier.run_id, passed=result.passed, total=result.total)
    return Best(0, earlier.code, result)


def _run_one(run: Run, spec: TaskSpec) -> TaskResult:
    """The one catch-all: known failures map to a status, unknown ones are logged and recorded."""
    if run.stop.is_set():
        reason = run.halt_reason or ("budget" if run.budget.stopped else "interrupted")
        return _skipped(spec, reason)
    with structlog.contextvars.bound_contextvars(task_id=spec.id):
        result = _attempt_task(run, spec)
        if run.store is not None:
            run.store.record_task(run.rundir.run_id, result, run.digests[spec.id])
        return result


def _errored(run: Run, spec: TaskSpec, reason: str) -> TaskResult:
    """A task a fault ended: what it spent still shows (the ledger knows, even mid-attempt)."""
    return TaskResult(spec.id, TaskStatus.ERROR, reason, cost_usd=run.budget.spent_task(spec.id))


def _attempt_task(run: Run, spec: TaskSpec) -> TaskResult:
    done = _already_done(run, spec)
    if done is not None:
        log.info("task_skipped", reason=done.reason, status=done.status.value)
        return done
    log.info("task_started")
    for temp in remove_stale_temps(spec.output):
        log.warning("stale_temp_removed", path=str(temp))
    try:
        result = run_task(spec, run.env, _prior(run, spec))
    except AuthenticationError as exc:
        run.halt_reason = f"run stopped: authentication failed ({exc.provider})"
        run.stop.set()
        log.error("authentication_failed", error=str(exc))
        result = _errored(run, spec, f"authentication failed: {exc}")
    except ProviderError as exc:
        log.error("task_provider_error", error=str(exc))
        result = _errored(run, spec, f"provider: {exc}")
    except Exception as exc:
        log.error("task_crashed", error=repr(exc), traceback=traceback.format_exc())
        result = _errored(run, spec, f"harness fault: {exc!r}")
    if run.budget.stopped:
        run.stop.set()
    log.info(
        "task_finished",
        status=result.status.value,
        passed=result.passed,
        total=result.total,
        cost_usd=str(result.cost_usd),
        reason=result.reason,
    )
    return result


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
    if run.budget.stopped:
        return RunStatus.BUDGET_STOPPED
    return RunStatus.INTERRUPTED if interrupted else RunStatus.COMPLETED


def execute(run: Run, clock: Callable[[], dt.datetime] | None = None) -> RunSummary:
    """Run every task on the pool and write the summary, whatever happens."""
    now = clock or (lambda: dt.datetime.now().astimezone())
    started = now()
    results: dict[str, TaskResult] = {}
    log.info("run_started", run_id=run.rundir.run_id, tasks=len(run.tasks), provider=run.provider)
    with _stop_on_signals(run.stop) as received, ThreadPoolExecutor(run.concurrency) as pool:
        futures = {spec.id: pool.submit(_run_one, run, spec) for spec in run.tasks}
        try:
            for task_id, future in futures.items():
                results[task_id] = future.result()
        finally:
            for spec in run.tasks:
                results.setdefault(spec.id, _skipped(spec, "interrupted"))
            notes = run.notes + _review_notes(results.values())
            summary = RunSummary(
                run_id=run.rundir.run_id,
                started_at=started,
                finished_at=now(),
                status=_status(run, bool(received)),
                provider=run.provider,
                cap_usd=run.budget.cap_run,
                spent_usd=Decimal(run.budget.spent_run),
                tasks=tuple(results[s.id] for s in run.tasks),
                notes=notes,
            )
            run.after_summary(write_summary(run.rundir.root, summary))
            log.info("run_finished", status=summary.status.value, spent_usd=str(summary.spent_usd))
    return summary


def _review_notes(results) -> tuple[str, ...]:
    """Reviews that were neither CLEAN nor a list counted as clean (fail open): say how many."""
    count = sum(a.review == "unparseable" for r in results for a in r.attempts)
    if not count:
        return ()
    return (f"{count} review(s) were unparseable and counted as CLEAN (fail open)",)


def exit_code(summary: RunSummary) -> int:
    """The contract's exit codes for cron."""
    if summary.status is RunStatus.INTERRUPTED:
        return 130
    if summary.status is RunStatus.BUDGET_STOPPED:
        return 3
    return 0 if all(_passing(t) for t in summary.tasks) else 1


def _passing(task: TaskResult) -> bool:
    return task.status is TaskStatus.PASSED or (
        task.status is TaskStatus.SKIPPED and task.reason.startswith(UP_TO_DATE)
    )
