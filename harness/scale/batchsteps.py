"""The batch phase's steps on a worker: each one runs today's batch code once, in a process.

`batch_submit` and `batch_poll` start `python -m harness.scale.batchsteps KIND STEP.json`,
which opens the task's run folder exactly as its shard does (start-up checks, run lock,
`open_run`, resuming what an earlier step recorded) with the workflow's time as the batch
phase's clock, then: submit, today's `start_batch` (reserve, then submit or re-attach to
the batch the store records, so a retried step never submits twice); poll, `attach` (never
submits), one `poll_once` (cancel at the deadline, settle what ended) and the backoff from
`BatchTiming`. Holds still out are let go before the process ends (the next step takes them
again). It prints one line, a `BatchWait` as JSON. No thread polls: the workflow's durable
timer is the wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import signal
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError

from harness.errors import BadInput, ExitCode
from harness.scale.activities import _die_with_parent, unreachable
from harness.scale.batchflow import POLL, SUBMIT, BatchStep, BatchWait
from harness.scale.payloads import Shard
from harness.scale.shard import UNREACHABLE, _run_args, refusal_code

if TYPE_CHECKING:
    from harness.runner.prepared import Run

__all__ = ["batch_poll", "batch_submit", "run_step"]

log = structlog.get_logger()


@activity.defn(name=SUBMIT)
async def batch_submit(step: BatchStep) -> BatchWait:
    """Reserve and submit (or re-attach to) the task's batch; whether its write waits."""
    return await _in_process("submit", step)


@activity.defn(name=POLL)
async def batch_poll(step: BatchStep) -> BatchWait:
    """Ask the vendor once and settle what ended; whether the write still waits, and how long."""
    return await _in_process("poll", step)


async def _in_process(kind: str, step: BatchStep) -> BatchWait:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "harness.scale.batchsteps",
        kind,
        json.dumps(dataclasses.asdict(step)),
        stdout=asyncio.subprocess.PIPE,
        preexec_fn=_die_with_parent,
    )
    done = asyncio.ensure_future(proc.communicate())
    beat = max(step.shard.night.heartbeat_s / 4, 0.2)
    try:
        while not done.done():
            activity.heartbeat()
            await asyncio.wait({done}, timeout=beat)
    except asyncio.CancelledError:  # the worker is shutting down: the step stops, saved
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        await done
        raise
    out, _ = done.result()
    task = step.shard.task_id
    if proc.returncode == ExitCode.BAD_INPUT:
        raise ApplicationError(f"task {task}: bad input", type="BadInput")
    if proc.returncode == UNREACHABLE:
        raise unreachable(task)
    if proc.returncode != 0:
        raise ApplicationError(f"task {task}: batch {kind} exited {proc.returncode}; retrying")
    return BatchWait(**json.loads(out.decode().strip().splitlines()[-1]))


def run_step(kind: str, step: BatchStep) -> BatchWait:
    """One step of the task's batch phase in its run folder (see the module docstring)."""
    # The runner is imported by the step's own process only, never by the worker.
    from harness.runner import RunLock, check_inputs, open_run

    args = replace(_run_args(step.shard), clock_at=step.now)
    inputs = check_inputs(args)
    lock = RunLock(args.run_dir)
    lock.acquire()
    try:
        run = open_run(args, inputs)
        try:
            wait = _STEPS[kind](run, step)
            log.info("batch_step", kind=kind, waiting=wait.waiting, sleep_s=wait.sleep_s)
            return wait
        finally:
            if run.parts.batch is not None:
                run.parts.batch.let_go()
            run.closing.close()
    finally:
        lock.release()


def _submit(run: Run, step: BatchStep) -> BatchWait:
    from harness.runner.batch.start import start_batch

    batch = run.parts.batch
    if batch is None or not start_batch(run):
        return BatchWait(waiting=False)
    return BatchWait(waiting=True, interval=batch.timing.poll_s)  # poll at once, as today


def _poll(run: Run, step: BatchStep) -> BatchWait:
    from harness.runner.batch.start import batch_requests

    batch = run.parts.batch
    if batch is None or not batch.attach(batch_requests(run)):
        return BatchWait(waiting=False)
    after = batch.poll_once(step.interval)
    if after is None:
        return BatchWait(waiting=False)
    sleep_s, interval = batch.timing.after(after, step.now)
    return BatchWait(waiting=True, sleep_s=sleep_s, interval=interval)


_STEPS = {"submit": _submit, "poll": _poll}


def _step_from(data: dict) -> BatchStep:
    return BatchStep(Shard.from_json(data["shard"]), data["now"], data["interval"])


def main(argv: list[str]) -> int:
    from harness.log import configure_logging
    from harness.runner import LockHeld

    configure_logging(None, level="warning")
    # A worker shutting down sends SIGTERM: exit through the `finally`s, so the step's holds
    # are let go and its run closed rather than left to be charged as a dead process's.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(ExitCode.INTERRUPTED))
    try:
        wait = run_step(argv[0], _step_from(json.loads(argv[1])))
    except BadInput as exc:
        print(f"harness batch step: {exc}", file=sys.stderr)
        return refusal_code(exc)
    except LockHeld:
        return ExitCode.LOCKED
    print(json.dumps(dataclasses.asdict(wait)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
