"""The night as Temporal workflows: the night fans its tasks out to child workflows (slices)
of at most `scale.temporal.slice_tasks` tasks, each slice runs one heartbeating activity per
task, then the night writes the summary.

Sharded so that no history grows with the night: the night's holds a few events per slice,
a slice's a few per task (docs/scale.md, "How a night maps onto Temporal"). Workflow code
is replayed, so it only schedules: every decision about a task is made by today's runner
inside the activity. The module has no import-time side effects (the workflow sandbox
re-imports it).

Stopping (`harness stop RUN --config`): the `stop` signal cancels the night's slices; a
cancelled slice cancels its tasks' activities and waits until each has ended (a running
shard gets SIGTERM and saves, as on a local SIGTERM; a task not yet started is never
started), then returns; the night still runs `close_night`, which writes the summary with
status interrupted.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, CancelledError, ChildWorkflowError
from temporalio.workflow import ActivityCancellationType, ChildWorkflowCancellationType

from harness.scale.batchflow import batch_phase
from harness.scale.payloads import Closing, Night, Plan, Shard, Slice, closing_queue, slice_id

__all__ = ["NIGHT", "SLICE", "STOP", "TASK_TIMEOUT", "NightWorkflow", "SliceWorkflow"]

NIGHT = "HarnessNight"
# How long Temporal waits on a workflow task a worker took before it hands the task to another
# worker: a worker that died (or hangs) holding one stalls its night this long, so it is
# Temporal's 10 s default, not more. Every workflow task here only schedules: the largest, a
# slice's first, encodes its tasks' ids-only inputs (scale.temporal.slice_tasks at most, a
# few hundred bytes each), which takes well under a second even on a loaded worker.
TASK_TIMEOUT = timedelta(seconds=10)
SLICE = "HarnessSlice"
STOP = "stop"
# A shard that cannot start (bad input) is not retried; a dead worker's shard is, elsewhere.
_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=["BadInput"],
)


@workflow.defn(name=NIGHT)
class NightWorkflow:
    """Every slice of the night at once (the workers' slots pace the tasks), then the summary."""

    @workflow.init
    def __init__(self, plan: Plan) -> None:
        self._stopped = False
        self._slices: list[asyncio.Task[None]] = []

    @workflow.signal(name=STOP)
    def stop(self) -> None:
        """`harness stop`: no task starts any more; running ones save and end interrupted."""
        self._stopped = True
        for running in self._slices:
            running.cancel()

    @workflow.run
    async def run(self, plan: Plan) -> int:
        self._slices = [asyncio.create_task(self._slice(part)) for part in plan.slices()]
        if self._stopped:  # stopped before it began
            self.stop()
        await workflow.wait(self._slices)
        _raise_failure(self._slices)
        return await workflow.execute_activity(
            "close_night",
            Closing(plan.night, plan.task_ids, self._stopped),
            result_type=int,
            task_queue=closing_queue(workflow.info().task_queue),
            start_to_close_timeout=timedelta(minutes=10),
            retry_policy=_RETRY,
        )

    async def _slice(self, part: Slice) -> None:
        try:
            await workflow.execute_child_workflow(
                SLICE,
                part,
                id=slice_id(part.night.run_id, part.number),
                cancellation_type=ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
                task_timeout=TASK_TIMEOUT,
            )
        except asyncio.CancelledError:  # stopped before the slice started: its tasks never do
            return


@workflow.defn(name=SLICE)
class SliceWorkflow:
    """One slice's tasks at once; cancelled, it stops them and waits until each has saved."""

    def __init__(self) -> None:
        self._stopping = False

    @workflow.run
    async def run(self, part: Slice) -> None:
        tasks = [self._start_task(part.night, task_id) for task_id in part.task_ids]
        try:
            await workflow.wait(tasks)
        except asyncio.CancelledError:  # the night was stopped
            self._stopping = True  # before any task can reach its run_task
            for task in tasks:
                task.cancel()
            await workflow.wait(tasks)
            return  # whatever a stopped task ended with (cancelled, timed out): it was stopped
        _raise_failure(tasks)

    def _start_task(self, night: Night, task_id: str) -> asyncio.Future[int]:
        if night.batch:  # its first write by batch, polled on durable timers (batchflow.py)
            return asyncio.ensure_future(self._batched(night, task_id))
        return _run_task(night, task_id)

    async def _batched(self, night: Night, task_id: str) -> int:
        await batch_phase(night, task_id)
        if self._stopping:  # the batch phase ended after the stop: the task never starts
            raise asyncio.CancelledError
        return await _run_task(night, task_id)


def _run_task(night: Night, task_id: str) -> workflow.ActivityHandle[int]:
    return workflow.start_activity(
        "run_task",
        Shard(night, task_id),
        result_type=int,
        start_to_close_timeout=timedelta(hours=24),
        heartbeat_timeout=timedelta(seconds=night.heartbeat_s),
        retry_policy=_RETRY,
        # A stopped task's shard saves before the night's summary reads it.
        cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    )


def _raise_failure(tasks: list[asyncio.Task]) -> None:
    """Raise the first failure in the list's order (deterministic) that is not a stop."""
    for task in tasks:
        failure = None if task.cancelled() else task.exception()
        stopped = isinstance(failure, ActivityError | ChildWorkflowError) and isinstance(
            failure.cause, CancelledError
        )
        if failure is not None and not stopped:
            raise failure
