"""The worker's activities: run one task in a shard process, and close the night.

`run_task` heartbeats while its shard runs; when the worker dies the heartbeats stop, Temporal
times the activity out and retries it on another worker, where the shard resumes (the
retry is today's resume). The shard process dies with its worker (PR_SET_PDEATHSIG), so a
dead worker leaves no task running that another could duplicate.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from harness.errors import ExitCode
from harness.fsio import write_atomic
from harness.report import SCHEMA, load_summary, render_html, render_markdown
from harness.results import RunStatus, StopCause, TaskResult, TaskStatus, usd
from harness.scale.gather import gather
from harness.scale.payloads import Closing, Night, Shard, night_dir, shard_dir
from harness.scale.shard import UNREACHABLE, die_with_parent
from harness.scale.warm import exited, kind_of, start_shard
from harness.store import Store

__all__ = ["HALTED", "close_night", "run_task", "unreachable"]

T = TypeVar("T")

HALTED = "Halted"  # the failure type of an outage outlasting scale.patience_s: exit 4
# Worst first: the night's exit code is the worst of its tasks', in runner.exit_code's order.
_EXIT_ORDER = (
    ExitCode.HALTED,
    ExitCode.BUDGET,
    ExitCode.INTERRUPTED,
    ExitCode.NOT_ALL_PASSED,
    ExitCode.OK,
)
_STATUS_ORDER = (
    RunStatus.HALTED,
    RunStatus.BUDGET_STOPPED,
    RunStatus.INTERRUPTED,
    RunStatus.COMPLETED,
)


def _die_with_parent() -> None:
    die_with_parent()


@activity.defn(name="run_task")
async def run_task(shard: Shard) -> int:
    """One task through today's runner in a process of its own, forked from the worker's warm
    process (harness/scale/warm.py); its exit code."""
    beat = max(shard.night.heartbeat_s / 4, 0.2)
    # The first live task a worker takes waits while the warm process with the vendor SDKs
    # starts (harness/scale/warm.py), heartbeating.
    payload = json.dumps(shard.to_json())
    started = asyncio.ensure_future(start_shard(payload, kind_of(shard.night.provider)))
    ended: asyncio.Future[int] | None = None
    try:
        proc = await _wait(started, beat)
        ended = asyncio.ensure_future(exited(proc))
        code = await _wait(ended, beat)
    except asyncio.CancelledError:  # stopped (harness stop, a worker shutting down): it saves
        proc = await asyncio.shield(started)  # one being forked still is, then stopped
        ended = ended or asyncio.ensure_future(exited(proc))
        if not ended.done():
            with contextlib.suppress(ProcessLookupError, ValueError):
                proc.terminate()  # SIGTERM
        await asyncio.shield(_wait(ended, beat))  # alive while it saves, so not retried as dead
        raise
    if code == ExitCode.BAD_INPUT:
        raise ApplicationError(f"task {shard.task_id}: bad input", type="BadInput")
    if code == UNREACHABLE:
        raise unreachable(shard.task_id)
    if code not in _EXIT_ORDER:  # locked by a shard still alive, interrupted, crashed: again
        raise ApplicationError(f"task {shard.task_id}: shard exited {code}; retrying")
    return code


def unreachable(task_id: str) -> ApplicationError:
    """The failure that halts the night: the task's shard waited `scale.patience_s` for the
    database and it never came back (the shard's log names the outage)."""
    return ApplicationError(
        f"task {task_id}: scale.database stayed unreachable past scale.patience_s; the night "
        "halts (resume it with --resume RUN_ID once the database is back)",
        type=HALTED,
        non_retryable=True,
    )


async def _wait(ended: asyncio.Future[T], beat: float) -> T:
    """What `ended` gives (the shard's exit code, the shard), heartbeating every `beat`
    seconds until then."""
    while True:
        activity.heartbeat()
        try:
            return await asyncio.wait_for(asyncio.shield(ended), beat)
        except TimeoutError:
            continue


@activity.defn(name="close_night")
def close_night(closing: Closing) -> int:
    """Merge the tasks' summaries into the night's summary.json|md|html and gather their runs
    into the night's folder and store (harness.scale.gather); the exit code.
    A stopped night is interrupted (exit 130) and its tasks that never started are skipped,
    as on a local SIGTERM."""
    night = closing.night
    parts = [_task_summary(night, task_id, closing.stopped) for task_id in closing.task_ids]
    if closing.stopped:
        parts = [_interrupted(p) for p in parts]
    data = _merged(night, parts)
    root = night_dir(night)
    spent = sum((p["spent"] for p in parts), Decimal(0))
    gather(root, data, spent, tasks=Path(night.tasks), seed=night.seed)
    write_atomic(root / "summary.md", render_markdown(data))
    write_atomic(root / "summary.html", render_html(data))
    write_atomic(root / "summary.json", json.dumps(data, indent=2) + "\n")
    latest = Path(night.run_dir) / "latest"
    tmp = latest.with_name(".latest.tmp")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(night.run_id)
    tmp.replace(latest)
    return int(_worst(_EXIT_ORDER, [ExitCode(p["exit"]) for p in parts]))


def _interrupted(part: dict[str, Any]) -> dict[str, Any]:
    """A task's part of a stopped night: interrupted unless something worse stopped it first
    (a task that finished before the stop keeps its own status in the task list)."""
    status = _worst(_STATUS_ORDER, [RunStatus(part["status"]), RunStatus.INTERRUPTED])
    code = _worst(_EXIT_ORDER, [ExitCode(part["exit"]), ExitCode.INTERRUPTED])
    return {**part, "status": status.value, "exit": int(code)}


def _not_started(night: Night, task_id: str) -> dict[str, Any]:
    """A task the stop reached before its shard wrote a summary: skipped, as locally, with
    what it had spent."""
    task = TaskResult(task_id, TaskStatus.SKIPPED, "interrupted", cause=StopCause.RUN_STOPPED)
    return {
        "schema": SCHEMA,
        "started_at": None,  # it never ran: the night's times are the others'
        "finished_at": None,
        "status": RunStatus.INTERRUPTED.value,
        "notes": [],
        "task": task.to_json(),
        "exit": int(ExitCode.INTERRUPTED),
        "spent": _spent_before(night, task_id),
    }


def _spent_before(night: Night, task_id: str) -> Decimal:
    """What a task that wrote no summary already spent: a shard killed with its worker before
    the stop left calls in its store (charged, and gathered into the night's store)."""
    path = shard_dir(night, task_id) / "harness.db"
    if not path.is_file():
        return Decimal(0)
    store = Store.open(path)
    try:
        run_id = store.latest_run()
        return Decimal(0) if run_id is None else store.spent(run_id)
    finally:
        store.close()


def _task_summary(night: Night, task_id: str, stopped: bool) -> dict[str, Any]:
    latest = shard_dir(night, task_id) / "latest"
    if stopped and not (latest / "summary.json").is_file():
        return _not_started(night, task_id)
    data = load_summary(latest)
    task = next(t for t in data["tasks"] if t["id"] == task_id)
    status = RunStatus(data["status"])
    passing = task["status"] == "passed"
    code = {
        RunStatus.HALTED: ExitCode.HALTED,
        RunStatus.INTERRUPTED: ExitCode.INTERRUPTED,
        RunStatus.BUDGET_STOPPED: ExitCode.BUDGET,
    }.get(status, ExitCode.OK if passing else ExitCode.NOT_ALL_PASSED)
    store = Store.open(shard_dir(night, task_id) / "harness.db")
    try:  # the exact spend: summary.json rounds each shard's to the micro-dollar
        spent = store.spent(data["run_id"])
    finally:
        store.close()
    return {**data, "task": task, "exit": int(code), "spent": spent}


def _merged(night: Night, parts: list[dict[str, Any]]) -> dict[str, Any]:
    spent = sum((p["spent"] for p in parts), Decimal(0))
    ran = [p for p in parts if p["started_at"] is not None]
    now = dt.datetime.now().astimezone().isoformat()  # stopped before any task ran
    notes = list(dict.fromkeys(n for p in parts for n in p["notes"]))
    return {
        "schema": SCHEMA,
        "run_id": night.run_id,
        "started_at": min((p["started_at"] for p in ran), default=now),
        "finished_at": max((p["finished_at"] for p in ran), default=now),
        "status": _worst(_STATUS_ORDER, [RunStatus(p["status"]) for p in parts]).value,
        "provider": night.provider,
        "budget": {"cap_usd": usd(Decimal(night.cap_usd)), "spent_usd": usd(spent)},
        "notes": notes,
        "tasks": [p["task"] for p in parts],
    }


def _worst(order, values):
    return min(values, key=order.index)
