"""`harness worker`: serve the nights of a task queue until SIGTERM."""

from __future__ import annotations

import asyncio
import signal
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import structlog
from temporalio.client import Client
from temporalio.worker import Worker

from harness.config import ScaleConfig
from harness.errors import BadInput
from harness.scale import warm
from harness.scale.activities import close_night, run_task
from harness.scale.batchsteps import batch_poll, batch_submit
from harness.scale.build import night_queue
from harness.scale.connection import connection_options
from harness.scale.night import NightWorkflow, SliceWorkflow
from harness.scale.payloads import closing_queue

__all__ = ["connect", "serve"]

log = structlog.get_logger()

# On SIGTERM running shards get this long to finish; then they are stopped (they save, as on
# a local SIGTERM) and Temporal hands their tasks to another worker, where they resume.
GRACE = timedelta(seconds=10)


async def connect(scale: ScaleConfig) -> Client:
    """The cluster's Temporal client; a server that cannot be reached is bad input (exit 2)."""
    try:
        return await Client.connect(scale.temporal.address, **connection_options(scale))
    except RuntimeError as exc:
        raise BadInput(
            f"scale.temporal.address {scale.temporal.address}: cannot connect ({exc}); start "
            "the Temporal server or fix the address in the config"
        ) from exc


async def serve(scale: ScaleConfig, concurrency: int) -> None:
    """Run tasks of this build's nights on `scale.temporal.task_queue`, `concurrency` at a
    time, until SIGTERM/SIGINT; a night's closing step runs beside them in a slot of its own."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    client = await connect(scale)
    warm.start(warm.first_kind())  # what each task is forked from, the harness imported
    queue = night_queue(scale)  # this build's nights only (harness/scale/build.py)
    with ThreadPoolExecutor(1) as executor:
        tasks = Worker(
            client,
            task_queue=queue,
            workflows=[NightWorkflow, SliceWorkflow],
            activities=[run_task, batch_submit, batch_poll],
            max_concurrent_activities=concurrency,  # each a task's process: N means N
            graceful_shutdown_timeout=GRACE,
        )
        closing = Worker(
            client,
            task_queue=closing_queue(queue),
            activities=[close_night],
            activity_executor=executor,
            max_concurrent_activities=1,
            graceful_shutdown_timeout=GRACE,
        )
        try:
            async with tasks, closing:
                log.info("worker_serving", task_queue=queue, slots=concurrency)
                await stop.wait()
                log.info("worker_stopping")
        finally:
            warm.stop()
