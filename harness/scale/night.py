"""The night as a Temporal workflow: one heartbeating activity per task, then the summary.

Workflow code is replayed, so it only schedules: every decision about a task is made by
today's runner inside the activity. The module has no import-time side effects (the
workflow sandbox re-imports it).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from harness.scale.batchflow import batch_phase
from harness.scale.payloads import Night, Shard

__all__ = ["NIGHT", "NightWorkflow"]

NIGHT = "HarnessNight"
# A shard that cannot start (bad input) is not retried; a dead worker's shard is, elsewhere.
_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=["BadInput"],
)


@workflow.defn(name=NIGHT)
class NightWorkflow:
    """Every task of the night at once (the workers' slots pace them), then the summary."""

    @workflow.run
    async def run(self, night: Night) -> int:
        await asyncio.gather(*(self._task(night, task_id) for task_id in night.task_ids))
        return await workflow.execute_activity(
            "close_night",
            night,
            result_type=int,
            start_to_close_timeout=timedelta(minutes=10),
            retry_policy=_RETRY,
        )

    async def _task(self, night: Night, task_id: str) -> int:
        if night.batch:  # its first write by batch, polled on durable timers (batchflow.py)
            await batch_phase(night, task_id)
        return await workflow.execute_activity(
            "run_task",
            Shard(night, task_id),
            result_type=int,
            start_to_close_timeout=timedelta(hours=24),
            heartbeat_timeout=timedelta(seconds=night.heartbeat_s),
            retry_policy=_RETRY,
        )
