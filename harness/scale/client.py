"""`harness run` and `harness stop` with `scale.engine: temporal`: start (or re-attach to) the
night's workflow, wait for it, print the same summary and return the same exit code; or stop
it the way SIGTERM stops a local night."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from harness.config import BatchConfig, ScaleConfig
from harness.errors import BadInput, ExitCode
from harness.report import load_summary, render_markdown
from harness.runner import RunArgs
from harness.runner.inputs import Inputs
from harness.scale.night import NIGHT, STOP, TASK_TIMEOUT
from harness.scale.payloads import Night, Plan, night_dir, workflow_id
from harness.scale.worker import connect
from harness.store import new_run_id

__all__ = ["bad_input", "batch_slice_tasks", "poll_rounds", "run_night", "stop_night"]


def _plan(args: RunArgs, inputs: Inputs) -> Plan:
    if args.resume == "latest":
        raise BadInput("--resume: on Temporal name the run id to re-attach to (--resume RUN_ID)")
    if args.only is not None:
        raise BadInput("--only is not offered on Temporal yet; write a task list of those tasks")
    night = Night(
        run_id=args.resume or new_run_id(),
        tasks=str(args.tasks.resolve()),
        run_dir=str(args.run_dir.resolve()),
        task_count=len(inputs.specs),
        provider=args.provider,
        seed=args.seed,
        cap_usd=str(inputs.config.budget.run_cap(args.budget_usd, dt.datetime.now())),
        config=str(args.config.resolve()) if args.config else None,
        heartbeat_s=inputs.config.scale.temporal.heartbeat_s,
        shared_budget=inputs.config.scale.database is not None,
        batch=inputs.config.batch.enabled,
    )
    slice_tasks = inputs.config.scale.temporal.slice_tasks
    if night.batch:
        slice_tasks = min(slice_tasks, batch_slice_tasks(inputs.config.batch, dt.datetime.now()))
    return Plan(night, [s.id for s in inputs.specs], slice_tasks)


# A slice's history, in events: per task without batch (run_task and the workflow tasks around
# it; tests/scale/test_night.py), the batch phase's submit step, and each poll round (a timer
# and a poll activity, with their workflow tasks; tests/scale/test_batch_timers.py). A slice
# with batch is kept under Temporal's 10,240-event warning whatever the polling needs.
EVENTS_PER_TASK = 6
EVENTS_PER_SUBMIT = 6
EVENTS_PER_POLL = 11
SLICE_EVENTS = 10_000


def poll_rounds(batch: BatchConfig, now: dt.datetime) -> int:
    """The most poll rounds one task's batch can take: sleeps from `poll_s`, doubling up to
    `max_poll_s`, until the deadline, and one more at it (the round that cancels)."""
    window = (batch.deadline_at(now.astimezone()) - now.astimezone()).total_seconds()
    rounds, waited, interval = 1, 0.0, float(batch.poll_s)
    while waited < window:
        waited += interval
        interval = min(interval * 2, float(batch.max_poll_s))
        rounds += 1
    return rounds


def batch_slice_tasks(batch: BatchConfig, now: dt.datetime) -> int:
    """The most tasks one slice of a batch night can hold and stay under SLICE_EVENTS."""
    per_task = EVENTS_PER_TASK + EVENTS_PER_SUBMIT + EVENTS_PER_POLL * poll_rounds(batch, now)
    return max(1, SLICE_EVENTS // per_task)


async def _start_and_wait(plan: Plan, inputs: Inputs, resumed: bool) -> int:
    scale = inputs.config.scale
    client = await connect(scale)
    if resumed and scale.database is not None:
        await _forget_halt(client, scale.database, plan.night.run_id)
    handle = await client.start_workflow(
        NIGHT,
        plan,
        id=workflow_id(plan.night.run_id),
        task_queue=scale.temporal.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        result_type=int,
        task_timeout=TASK_TIMEOUT,
    )
    try:
        return await handle.result()
    except WorkflowFailureError as exc:
        refusal = bad_input(exc)
        if refusal is None:
            raise
        raise refusal from exc


def bad_input(failure: BaseException) -> BadInput | None:
    """The shard's refusal of its input (exit 2) behind a failed night, if that is what failed
    it: the worker's log has the shard's message."""
    cause: BaseException | None = failure
    while cause is not None:
        if isinstance(cause, ApplicationError) and cause.type == "BadInput":
            return BadInput(f"{cause.message} (the worker's log says what to change)")
        cause = getattr(cause, "cause", None) or cause.__cause__
    return None


async def _forget_halt(client: Client, database: str, run_id: str) -> None:
    """A resumed night that a refused key halted starts without that halt (the operator
    fixed the key), unless the night still runs: then it is only re-attached to."""
    handle = client.get_workflow_handle(workflow_id(run_id))
    try:
        running = (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        running = False
    if not running:
        from harness.budget import LedgerError
        from harness.calls.shared import clear_halt

        try:
            clear_halt(database, run_id)
        except LedgerError as exc:
            raise BadInput(f"scale.database: {exc}") from exc


def run_night(args: RunArgs, inputs: Inputs) -> tuple[ExitCode, str, str]:
    """(exit code, the morning summary in markdown, the night's folder)."""
    plan = _plan(args, inputs)
    code = ExitCode(asyncio.run(_start_and_wait(plan, inputs, args.resume is not None)))
    root = night_dir(plan.night)
    return code, render_markdown(load_summary(root)), str(root)


async def _running_night(client: Client, scale: ScaleConfig, run_id: str) -> WorkflowHandle:
    """The handle of the night `run_id` if it runs; BadInput naming what to check if not."""
    handle = client.get_workflow_handle(workflow_id(run_id), result_type=int)
    try:
        status = (await handle.describe()).status
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        raise BadInput(
            f"no night {run_id} on Temporal at {scale.temporal.address} (namespace "
            f"{scale.temporal.namespace}): check the run id and the config"
        ) from exc
    if status != WorkflowExecutionStatus.RUNNING:
        state = status.name.lower() if status is not None else "unknown"
        raise BadInput(f"night {run_id} is not running ({state}); nothing to stop")
    return handle


async def _plan_of(client: Client, handle: WorkflowHandle) -> Plan:
    """The night's input, read from its history (no worker needed to answer)."""
    async for event in handle.fetch_history_events():
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        (plan,) = await client.data_converter.decode(payloads, [Plan])
        return plan
    raise RuntimeError(f"workflow {handle.id} has no history")


async def _stop(scale: ScaleConfig, run_id: str, wait_s: float) -> tuple[ExitCode | None, Path]:
    client = await connect(scale)
    handle = await _running_night(client, scale, run_id)
    folder = night_dir((await _plan_of(client, handle)).night)
    try:
        await handle.signal(STOP)
    except RPCError as exc:  # it ended between the look and the signal
        raise BadInput(f"night {run_id} is not running (it just ended); nothing to stop") from exc
    try:
        return ExitCode(await asyncio.wait_for(handle.result(), wait_s)), folder
    except TimeoutError:
        return None, folder


def stop_night(scale: ScaleConfig, run_id: str, wait_s: float) -> tuple[ExitCode | None, Path]:
    """Signal the night to stop and wait up to `wait_s` for its summary: (the night's exit
    code, or None if it is still saving; its run folder)."""
    return asyncio.run(_stop(scale, run_id, wait_s))
