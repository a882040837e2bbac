"""`harness run` and `harness stop` with `scale.engine: temporal`: start (or re-attach to) the
night's workflow, wait for it, print the same summary and return the same exit code; or stop
it the way SIGTERM stops a local night."""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
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
from harness.scale.activities import HALTED
from harness.scale.build import night_queue
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


async def _start_and_wait(plan: Plan, inputs: Inputs, resumed: bool) -> tuple[int, Night]:
    """Start the night, or re-attach to it by id; wait for its exit code: (it, the night)."""
    scale = inputs.config.scale
    client = await connect(scale)
    if resumed:
        run_id = plan.night.run_id
        found = await _through_outages(
            scale, client, run_id, lambda: _resumable(client, scale, run_id)
        )
        if isinstance(found, tuple):  # finished: its outcome, not a second run
            return found
        if found is not None:
            plan = found  # still running: its own plan (its run dir, its cap)
        elif scale.database is not None:  # stopped or halted: it starts again
            await _forget_halt(scale.database, plan.night.run_id)
    night = plan.night

    async def start() -> WorkflowHandle:
        return await client.start_workflow(
            NIGHT,
            plan,
            id=workflow_id(night.run_id),
            task_queue=night_queue(scale),  # served by workers of this build only
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            result_type=int,
            task_timeout=TASK_TIMEOUT,
        )

    handle = await _through_outages(scale, client, night.run_id, start)
    return await _through_outages(scale, client, night.run_id, handle.result), night


# A finished night's outcomes: --resume prints its summary again and starts nothing. A night
# that ended short of them (stopped, halted, stopped by a cap) starts again and resumes.
_FINISHED = (ExitCode.OK, ExitCode.NOT_ALL_PASSED)


async def _resumable(
    client: Client, scale: ScaleConfig, run_id: str
) -> tuple[int, Night] | Plan | None:
    """The night `run_id` on Temporal: (its exit code, the night) when it finished, its plan
    when it still runs, None when it ended short and starts again; BadInput when Temporal
    has no such night."""
    handle = client.get_workflow_handle(workflow_id(run_id), result_type=int)
    try:
        status = (await handle.describe()).status
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        raise BadInput(
            f"--resume: no night {run_id} on Temporal at {scale.temporal.address} (namespace "
            f"{scale.temporal.namespace}); check the run id and --config (a dev server started "
            "without --db-filename forgets its nights when it stops)"
        ) from exc
    plan = await _plan_of(client, handle)
    if status == WorkflowExecutionStatus.RUNNING:
        return plan
    if status == WorkflowExecutionStatus.COMPLETED:
        code = await handle.result()
        if code in _FINISHED:
            return code, plan.night
    return None


# What an unreachable server answers: the night is not over, the line to it is.
_OUTAGE = frozenset(
    {
        RPCStatusCode.UNAVAILABLE,
        RPCStatusCode.DEADLINE_EXCEEDED,
        RPCStatusCode.CANCELLED,
        RPCStatusCode.UNKNOWN,
        RPCStatusCode.RESOURCE_EXHAUSTED,
    }
)
_OUTAGE_WAIT_S = (1.0, 15.0)


class ServerLost(Exception):
    """Temporal stayed unreachable past `scale.patience_s`: the client stops waiting (exit 4);
    the night itself may still run (re-attach with --resume RUN_ID)."""


async def _through_outages(scale: ScaleConfig, client: Client, run_id: str, call):
    """`await call()`, called again while Temporal cannot be reached (a restart, a network
    outage), backing off; ServerLost once it has been unreachable for `scale.patience_s`
    without a break."""
    loop = asyncio.get_running_loop()
    since, wait = None, _OUTAGE_WAIT_S[0]
    while True:
        try:
            return await call()
        except RPCError as exc:
            if exc.status not in _OUTAGE:
                raise
            failure = exc
        if since is not None and await _reachable(client, run_id):
            since, wait = None, _OUTAGE_WAIT_S[0]  # it answered between two outages
        now = loop.time()
        since = now if since is None else since
        if now - since >= scale.patience_s:
            raise ServerLost(
                f"Temporal at {scale.temporal.address} unreachable for {now - since:.0f} s "
                f"(scale.patience_s {scale.patience_s:g}): {failure}; the night may still run: "
                f"re-attach with `harness run TASKS --config CONFIG --resume {run_id}`"
            ) from failure
        print(
            f"harness: Temporal at {scale.temporal.address} unreachable ({failure.message}); "
            f"waiting, up to scale.patience_s {scale.patience_s:g} s",
            file=sys.stderr,
        )
        await asyncio.sleep(wait)
        wait = min(wait * 2, _OUTAGE_WAIT_S[1])


async def _reachable(client: Client, run_id: str) -> bool:
    try:
        await client.get_workflow_handle(workflow_id(run_id)).describe()
    except RPCError:
        return False
    return True


def bad_input(failure: BaseException) -> BadInput | None:
    """The shard's refusal of its input (exit 2) behind a failed night, if that is what failed
    it: the worker's log has the shard's message."""
    cause = _cause(failure, "BadInput")
    if cause is None:
        return None
    return BadInput(f"{cause.message} (the worker's log says what to change)")


def _cause(failure: BaseException, kind: str) -> ApplicationError | None:
    """The application failure of type `kind` behind `failure`, if any."""
    cause: BaseException | None = failure
    while cause is not None:
        if isinstance(cause, ApplicationError) and cause.type == kind:
            return cause
        cause = getattr(cause, "cause", None) or cause.__cause__
    return None


async def _forget_halt(database: str, run_id: str) -> None:
    """A resumed night that a refused key halted starts without that halt (the operator
    fixed the key); only called when the night does not run."""
    from harness.budget import LedgerError
    from harness.calls.shared import clear_halt

    try:
        clear_halt(database, run_id)
    except LedgerError as exc:
        raise BadInput(f"scale.database: {exc}") from exc


def run_night(args: RunArgs, inputs: Inputs) -> tuple[ExitCode, str, str]:
    """(exit code, the morning summary in markdown, the night's folder). A night halted by an
    outage past `scale.patience_s`, or a server lost as long, exits 4 with the cause in
    place of the summary."""
    plan = _plan(args, inputs)
    try:
        code, night = asyncio.run(_start_and_wait(plan, inputs, args.resume is not None))
    except ServerLost as exc:
        return ExitCode.HALTED, f"harness: {exc}", str(night_dir(plan.night))
    except WorkflowFailureError as exc:
        refusal = bad_input(exc)
        if refusal is not None:
            raise refusal from exc
        halted = _cause(exc, HALTED)
        if halted is None:
            raise
        return (
            ExitCode.HALTED,
            f"harness: night {plan.night.run_id}: {halted.message}",
            str(night_dir(plan.night)),
        )
    root = night_dir(night)
    return ExitCode(code), render_markdown(load_summary(root)), str(root)


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
