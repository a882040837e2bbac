"""A workflow task that stalls (its worker died or hangs holding it) is handed to another worker
after the workflow task timeout, Temporal's 10 s default, and the night goes on."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import PollWorkflowTaskQueueRequest
from temporalio.client import Client

from harness.config import load_config
from harness.report import load_summary
from harness.scale.build import night_queue
from harness.scale.night import TASK_TIMEOUT
from harness.scale.payloads import workflow_id
from tests._night import Task, write_tasks
from tests.scale.cluster import HARNESS, cluster_config, workers

pytestmark = pytest.mark.slow


async def _take_first_workflow_task(address: str, queue: str) -> str:
    """Poll the night's queue as a worker would and never answer: a worker that took the
    night's first workflow task and died holding it. The workflow id of the task taken."""
    client = await Client.connect(address)
    while True:  # a long poll that ends empty is asked again
        task = await client.workflow_service.poll_workflow_task_queue(
            PollWorkflowTaskQueueRequest(
                namespace="default", task_queue=TaskQueue(name=queue), identity="died-holding-it"
            )
        )
        if task.task_token:
            return task.workflow_execution.workflow_id


async def _history(address: str, run_id: str) -> list:
    client = await Client.connect(address)
    handle = client.get_workflow_handle(workflow_id(run_id))
    return [event async for event in handle.fetch_history_events()]


def test_a_workflow_task_held_by_a_dead_worker_moves_on(tmp_path: Path, temporal_address) -> None:
    """The night's first workflow task is taken by a worker that never answers; it times out
    after the night's workflow task timeout (10 s, recorded in its history), a live worker
    takes it again, and the night ends by its outcomes (exit 0, every task passed)."""
    tasks = write_tasks(tmp_path / "tasks", [Task(f"t{n}", solved=True) for n in range(2)])
    config = cluster_config(tmp_path / "cluster.yaml", temporal_address, "stall")
    queue = night_queue(load_config(config).scale)
    runs = tmp_path / "runs"
    argv = [*HARNESS, "run", str(tasks), "--provider", "sim", "--run-dir", str(runs)]
    night = subprocess.Popen([*argv, "--config", str(config), "--log-level", "warning"])
    taken = asyncio.run(_take_first_workflow_task(temporal_address, queue))
    with workers(config, 1):
        code = night.wait()
    run_id = (runs / "latest").resolve().name
    history = asyncio.run(_history(temporal_address, run_id))
    started = history[0].workflow_execution_started_event_attributes
    timed_out = [
        e.workflow_task_timed_out_event_attributes.timeout_type
        for e in history
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT
    ]

    assert taken == workflow_id(run_id)
    assert started.workflow_task_timeout.ToTimedelta() == TASK_TIMEOUT
    assert TASK_TIMEOUT.total_seconds() <= 10
    assert timed_out == [TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE]
    assert code == 0
    assert [t["status"] for t in load_summary(runs / run_id)["tasks"]] == ["passed"] * 2
