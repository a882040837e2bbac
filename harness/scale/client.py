"""`harness run` with `scale.engine: temporal`: start (or re-attach to) the night's workflow,
wait for it, print the same summary and return the same exit code."""

from __future__ import annotations

import asyncio
import datetime as dt

from temporalio.common import WorkflowIDConflictPolicy

from harness.errors import BadInput, ExitCode
from harness.report import load_summary, render_markdown
from harness.runner import RunArgs
from harness.runner.inputs import Inputs
from harness.scale.night import NIGHT
from harness.scale.payloads import Night, night_dir, workflow_id
from harness.scale.worker import connect
from harness.store import new_run_id

__all__ = ["run_night"]


def _night(args: RunArgs, inputs: Inputs) -> Night:
    if args.resume == "latest":
        raise BadInput("--resume: on Temporal name the run id to re-attach to (--resume RUN_ID)")
    if args.only is not None:
        raise BadInput("--only is not offered on Temporal yet; write a task list of those tasks")
    return Night(
        run_id=args.resume or new_run_id(),
        tasks=str(args.tasks.resolve()),
        run_dir=str(args.run_dir.resolve()),
        task_ids=[s.id for s in inputs.specs],
        provider=args.provider,
        seed=args.seed,
        cap_usd=str(inputs.config.budget.run_cap(args.budget_usd, dt.datetime.now())),
        config=str(args.config.resolve()) if args.config else None,
        heartbeat_s=inputs.config.scale.temporal.heartbeat_s,
        shared_budget=inputs.config.scale.database is not None,
        batch=inputs.config.batch.enabled,
    )


async def _start_and_wait(night: Night, inputs: Inputs) -> int:
    scale = inputs.config.scale
    client = await connect(scale)
    handle = await client.start_workflow(
        NIGHT,
        night,
        id=workflow_id(night.run_id),
        task_queue=scale.temporal.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        result_type=int,
    )
    return await handle.result()


def run_night(args: RunArgs, inputs: Inputs) -> tuple[ExitCode, str, str]:
    """(exit code, the morning summary in markdown, the night's folder)."""
    night = _night(args, inputs)
    code = ExitCode(asyncio.run(_start_and_wait(night, inputs)))
    root = night_dir(night)
    return code, render_markdown(load_summary(root)), str(root)
