"""One task's batch phase on durable timers: submit, then sleep and poll until it settles.

Workflow code, so it only schedules and keeps the time: each step is an activity that runs
today's batch code (runner/batch/night.py) once, in a process of its own
(scale/batchsteps.py); between polls the workflow sleeps on a durable timer, which costs
nothing while it waits and survives a restart of every worker and of the client. The write
itself is made later by the task's `run_task`, which reuses the settled reply. Only ids,
paths and numbers travel. No import-time side effects (the workflow sandbox re-imports it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, CancelledError
from temporalio.workflow import ActivityCancellationType

from harness.scale.payloads import Night, Shard

__all__ = ["POLL", "SUBMIT", "BatchStep", "BatchWait", "batch_phase"]

SUBMIT = "batch_submit"
POLL = "batch_poll"
# A step is short; a dead worker's step is retried elsewhere. A step that keeps failing gives
# the batch up: the task's write then runs interactively, as when today's poll thread faults.
_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    non_retryable_error_types=["BadInput"],
)


@dataclass(frozen=True)
class BatchStep:
    """One step of a task's batch phase: the task, the workflow's time (unix seconds; the
    batch phase's clock, so its deadline and the simulator's vendor follow the workflow),
    and the backoff's current interval (a poll)."""

    shard: Shard
    now: float
    interval: float = 0.0


@dataclass(frozen=True)
class BatchWait:
    """What a step left: whether the task's write still waits on a batch, how long to sleep
    before the next poll, and the backoff's interval for that poll."""

    waiting: bool
    sleep_s: float = 0.0
    interval: float = 0.0


async def batch_phase(night: Night, task_id: str) -> None:
    """Submit (or re-attach to) the task's batch, then poll it on timers until it settled."""
    shard = Shard(night, task_id)
    try:
        wait = await _step(SUBMIT, BatchStep(shard, _now()), night)
        while wait.waiting:
            if wait.sleep_s > 0:
                await workflow.sleep(wait.sleep_s)
            wait = await _step(POLL, BatchStep(shard, _now(), wait.interval), night)
    except ActivityError as exc:
        if isinstance(exc.cause, CancelledError):  # `harness stop`: the task must not start
            raise
        workflow.logger.warning("batch phase of %s given up: %s", task_id, exc.cause or exc)


async def _step(name: str, step: BatchStep, night: Night) -> BatchWait:
    return await workflow.execute_activity(
        name,
        step,
        result_type=BatchWait,
        start_to_close_timeout=timedelta(minutes=30),
        heartbeat_timeout=timedelta(seconds=night.heartbeat_s),
        retry_policy=_RETRY,
        # A stopped step's process lets its holds go and closes its run before the night's
        # summary is written.
        cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    )


def _now() -> float:
    return workflow.now().timestamp()
