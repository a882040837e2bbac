"""`harness worker` on a Temporal dev server: `--concurrency N` runs at most N tasks at once,
and a worker of another build takes no task of a night."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from harness.config import load_config
from harness.scale.build import night_queue
from harness.scale.payloads import slice_id
from tests._night import Task, write_tasks
from tests.scale.cluster import HARNESS, cluster_config, workers

pytestmark = pytest.mark.slow


def _spans(runs: Path) -> list[tuple[str, str]]:
    """Each shard run's (first, last) event timestamp: when it ran, by the machine's clock."""
    spans = []
    for path in runs.glob("*/tasks/*/*/events.jsonl"):
        if "latest" in path.parts:
            continue
        stamps = [json.loads(line)["timestamp"] for line in path.read_text().splitlines()]
        spans.append((min(stamps), max(stamps)))
    return sorted(spans)


def test_concurrency_one_never_runs_two_tasks_at_once(tmp_path, temporal_address) -> None:
    """One worker with `--concurrency 1` and three tasks whose tests take seconds: the night
    passes, and no shard starts before the one before it has ended."""
    tasks = write_tasks(
        tmp_path / "tasks", [Task(f"t{n}", solved=True, slow_s=2) for n in range(3)]
    )
    config = cluster_config(tmp_path / "cluster.yaml", temporal_address, "one-at-a-time")
    runs = tmp_path / "runs"
    run = [*HARNESS, "run", str(tasks), "--provider", "sim", "--run-dir", str(runs)]
    with workers(config, 1, concurrency=1):
        night = subprocess.run([*run, "--config", str(config), "--log-level", "warning"])
    spans = _spans(runs)

    assert (night.returncode, len(spans)) == (0, 3)
    assert all(later[0] > earlier[1] for earlier, later in itertools.pairwise(spans))


async def _night_on(address: str, queue: str) -> str | None:
    """The run id of the night started on `queue`, once Temporal lists it."""
    client = await Client.connect(address)
    async for found in client.list_workflows(f'TaskQueue="{queue}"'):
        if found.workflow_type == "HarnessNight":
            return found.id.removeprefix("harness-night-")
    return None


async def _slices(address: str, run_id: str) -> list:
    """The histories of the night's slices."""
    client = await Client.connect(address)
    histories, number = [], 0
    while True:
        try:
            handle = client.get_workflow_handle(slice_id(run_id, number))
            histories.append(await handle.fetch_history())
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            return histories
        number += 1


def _events(histories: list, kind: str) -> list:
    field = f"activity_task_{kind}_event_attributes"
    return [getattr(e, field) for h in histories for e in h.events if e.HasField(field)]


def test_a_worker_of_another_build_takes_no_task(tmp_path, temporal_address) -> None:
    """A worker of another build (other cluster settings) is serving when a night starts:
    it takes none of the night's tasks, which wait until a worker of the night's build
    comes, and every task runs there."""
    address = temporal_address
    tasks = write_tasks(tmp_path / "tasks", [Task(f"t{n}", solved=True) for n in range(3)])
    config = cluster_config(tmp_path / "cluster.yaml", address, "builds")
    other = tmp_path / "other.yaml"
    other.write_text(config.read_text().replace("heartbeat_s: 2", "heartbeat_s: 3"))
    queue = night_queue(load_config(config).scale)
    runs = tmp_path / "runs"
    run = [*HARNESS, "run", str(tasks), "--provider", "sim", "--run-dir", str(runs)]
    with workers(other, 1, concurrency=3):
        night = subprocess.Popen([*run, "--config", str(config), "--log-level", "warning"])
        while night.poll() is None and (run_id := asyncio.run(_night_on(address, queue))) is None:
            time.sleep(0.2)  # until the night is on its queue, the other build serving
        with workers(config, 1, concurrency=3) as (own,):
            code = night.wait()
    started = _events(asyncio.run(_slices(address, run_id)), "started")

    assert code == 0
    assert [e.identity.split("@")[0] for e in started] == [str(own.pid)] * 3
