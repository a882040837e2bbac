"""Many tasks: start-up checks, the worker pool, the one catch-all per task, the summary."""

from __future__ import annotations

import datetime as dt
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import structlog

from harness.pipeline import TaskEnv, run_task
from harness.providers.base import AuthenticationError, ProviderError
from harness.report import RunSummary, write_summary
from harness.results import RunStatus, TaskResult, TaskStatus
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


def _skipped(spec: TaskSpec, reason: str) -> TaskResult:
    return TaskResult(id=spec.id, status=TaskStatus.SKIPPED, reason=reason)


def _run_one(run: Run, spec: TaskSpec) -> TaskResult:
    """The one catch-all: known failures map to a status, unknown ones are logged and recorded."""
    if run.stop.is_set():
        return _skipped(spec, "budget" if run.budget.stopped else "interrupted")
    with structlog.contextvars.bound_contextvars(task_id=spec.id):
        log.info("task_started")
        try:
            result = run_task(spec, run.env)
        except AuthenticationError as exc:
            run.stop.set()
            log.error("authentication_failed", error=str(exc))
            result = TaskResult(spec.id, TaskStatus.ERROR, f"authentication failed: {exc}")
        except ProviderError as exc:
            log.error("task_provider_error", error=str(exc))
            result = TaskResult(spec.id, TaskStatus.ERROR, f"provider: {exc}")
        except Exception as exc:  # noqa: BLE001 - the unit-of-work boundary
            log.error("task_crashed", error=repr(exc), traceback=traceback.format_exc())
            result = TaskResult(spec.id, TaskStatus.ERROR, f"harness fault: {exc!r}")
        if run.budget.stopped:
            run.stop.set()
        log.info("task_finished", status=result.status.value, passed=result.passed,
                 total=result.total, cost_usd=str(result.cost_usd), reason=result.reason)
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
            summary = RunSummary(
                run_id=run.rundir.run_id, started_at=started, finished_at=now(),
                status=_status(run, bool(received)), provider=run.provider,
                cap_usd=run.budget.cap_run, spent_usd=Decimal(run.budget.spent_run),
                tasks=tuple(results[s.id] for s in run.tasks), notes=run.notes,
            )
            write_summary(run.rundir.root, summary)
            log.info("run_finished", status=summary.status.value, spent_usd=str(summary.spent_usd))
    return summary


def exit_code(summary: RunSummary) -> int:
    """The contract's exit codes for cron."""
    if summary.status is RunStatus.INTERRUPTED:
        return 130
    if summary.status is RunStatus.BUDGET_STOPPED:
        return 3
    return 0 if all(t.status is TaskStatus.PASSED for t in summary.tasks) else 1
