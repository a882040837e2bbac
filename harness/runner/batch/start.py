"""Batch mode's wiring (its vendors, its timing) and its start: which tasks it submits."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable

import structlog

from harness.budget import Budget
from harness.calls import CallLog
from harness.config import BatchConfig
from harness.llm import BatchProvider, CallRequest
from harness.pipeline import first_write
from harness.runner.args import RunArgs
from harness.runner.batch.night import BatchNight, BatchTiming
from harness.runner.batch.rounds import Rounds
from harness.runner.carryover import starts_with_write
from harness.runner.inputs import Inputs
from harness.runner.prepared import Run
from harness.store import BatchLog

__all__ = [
    "batch_clock",
    "batch_night",
    "batch_requests",
    "batch_rounds",
    "batch_vendors",
    "start_batch",
]

log = structlog.get_logger()


def start_batch(run: Run) -> set[str]:
    """Submit (or re-attach to) the batch of attempt 1's writes; the task ids that wait for it.
    Off, stopped or with nothing to submit: nobody waits."""
    if run.parts.batch is None or run.parts.stop.is_set() or run.parts.budget.stopped:
        return set()
    if run.parts.rounds is not None:
        return set()  # in rounds the first writes are the first round
    requests = batch_requests(run)
    if not requests:
        return set()
    waiting = run.parts.batch.start(requests)
    log.info("batch_started", tasks=len(requests), waiting=len(waiting))
    return waiting


def batch_rounds(
    config: BatchConfig, night: BatchNight | None, stop: threading.Event, clock: Callable[[], float]
) -> Rounds | None:
    """The round collector when batch mode lists any step but attempt 1's write."""
    if night is None or not config.in_rounds:
        return None
    return Rounds(
        night.fresh,
        config.steps,
        deadline=night.timing.deadline,
        window_s=config.round_window_s,
        stop=stop,
        clock=clock,
    )


def batch_requests(run: Run) -> list[CallRequest]:
    """The first writes batch mode sends by batch: every task's that starts with a write from
    nothing, to a provider with a batch API."""
    if run.parts.batch is None:
        return []
    requests = []
    for spec in run.plan.tasks:
        try:
            if not starts_with_write(run, spec):
                continue
            request = first_write(spec, run.parts.env)
        except Exception as exc:
            log.warning("batch_request_failed", task_id=spec.id, error=repr(exc))
            continue
        if run.parts.batch.batchable(request):
            requests.append(request)
    return requests


def batch_vendors(args: RunArgs, inputs: Inputs) -> dict[str, BatchProvider]:
    """The batch APIs of the run's providers when config batch.enabled (none when off): the
    simulator's (its vendor side kept in a file of the run directory, so a resumed process
    sees the batches a killed one made), or the live adapters."""
    if not inputs.config.batch.enabled or not inputs.config.batch.steps:
        return {}  # off, or `steps: []`: no step goes by batch
    if args.provider == "sim":
        from harness.sim import SimBatch

        state = args.run_dir / "sim-batches.json"
        return {"sim": SimBatch(inputs.providers["sim"], state=state, clock=batch_clock(args))}
    if args.provider != "live":
        return {}  # a replay serves recorded replies: nothing to batch
    from harness.providers import BATCH_PROVIDERS, build_batch_adapter

    # A named OpenAI-compatible endpoint has no batch API: its writes run interactively.
    timeout = inputs.config.provider_timeout_s
    names = [name for name in inputs.providers if name in BATCH_PROVIDERS]
    return {name: build_batch_adapter(name, timeout_s=timeout) for name in names}


def batch_clock(args: RunArgs) -> Callable[[], float]:
    """The batch phase's clock: the wall clock, or the time a Temporal workflow gave this step
    (`RunArgs.clock_at`), so its deadline, and the simulator's vendor, run on the workflow's."""
    at = args.clock_at
    return time.time if at is None else (lambda: at)


def batch_night(
    vendors: dict[str, BatchProvider],
    inputs: Inputs,
    budget: Budget,
    calls: CallLog,
    batch_log: BatchLog,
    run_id: str,
    stop: threading.Event,
    started: dt.datetime,
    clock: Callable[[], float] = time.time,
) -> BatchNight | None:
    """The night's batch phase when config batch.enabled (None when off, or a replay)."""
    config = inputs.config.batch
    if not vendors:
        return None
    timing = BatchTiming(
        deadline=config.deadline_at(started).timestamp(),
        poll_s=config.poll_s,
        max_poll_s=max(config.poll_s, config.max_poll_s),
    )
    log.info("batch_mode", deadline=dt.datetime.fromtimestamp(timing.deadline).isoformat())
    return BatchNight(
        vendors,
        timing,
        budget=budget,
        prices=inputs.prices,
        calls=calls,
        batch_log=batch_log,
        run_id=run_id,
        stop=stop,
        clock=clock,
    )
