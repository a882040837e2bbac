"""`harness stop RUN --config cluster.yaml` stops a night on Temporal the way SIGTERM stops a
local one: running shards save and end interrupted, tasks not yet started never start, the
night's summary is written, and the `harness run` waiting on it exits 130."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from harness.report import load_summary, render_markdown
from tests._night import Task, write_tasks
from tests.scale.cluster import HARNESS, cluster_config, has_paid, shard_events, workers

pytestmark = pytest.mark.slow

TASKS = 8
# Each task's one test sleeps this long: the stop reaches a running shard mid-test (a heartbeat
# carries it within 0.8 × heartbeat_s = 1.6 s), and its test then finishes before it saves.
SLOW_S = 12


def _paid(runs: Path) -> list[str]:
    return [f"t{n}" for n in range(TASKS) if has_paid(runs, f"t{n}")]


def test_stop_ends_a_cluster_night_interrupted_with_its_summary(tmp_path, temporal_address):
    """Two workers mid-night: `harness stop` exits 0; each running shard saves and ends
    interrupted, started once; the tasks not yet started never start and are skipped as on a
    local SIGTERM; the night's summary.json says interrupted, and the waiting `harness run`
    prints it and exits 130."""
    tasks = write_tasks(
        tmp_path / "tasks", [Task(f"t{n}", solved=True, slow_s=SLOW_S) for n in range(TASKS)]
    )
    config = cluster_config(tmp_path / "cluster.yaml", temporal_address, "stop")
    runs = tmp_path / "runs"
    run = [*HARNESS, "run", str(tasks), "--provider", "sim", "--run-dir", str(runs)]
    run += ["--config", str(config), "--log-level", "warning"]
    with workers(config, 2, concurrency=1):
        out = (tmp_path / "night.out").open("w")
        night = subprocess.Popen(
            [*run, "--config", str(config), "--log-level", "warning"], stdout=out
        )
        while night.poll() is None and len(_paid(runs)) < 2:
            time.sleep(0.05)  # until two shards are mid-task
        run_id = next(runs.glob("*/tasks")).parent.name
        stop = subprocess.run(
            [*HARNESS, "stop", run_id, "--config", str(config)], capture_output=True, text=True
        )
        code = night.wait()
        out.close()
    summary = load_summary(runs / "latest")
    events = shard_events(runs)
    started = sorted(e["task_id"] for e in events if e["event"] == "task_started")
    shard_status = {
        t: json.loads((runs / run_id / "tasks" / t / "latest" / "summary.json").read_text())[
            "status"
        ]
        for t in started
    }
    skipped = {
        t["id"]: (t["status"], t["cause"], t["reason"])
        for t in summary["tasks"]
        if t["id"] not in started
    }

    assert (stop.returncode, code, summary["status"]) == (0, 130, "interrupted")
    assert 2 <= len(started) < TASKS
    assert started == sorted(set(started))  # none started twice
    assert set(shard_status.values()) == {"interrupted"}
    assert sorted(skipped) == sorted({f"t{n}" for n in range(TASKS)} - set(started))
    assert set(skipped.values()) == {("skipped", "run_stopped", "interrupted")}
    assert not any((runs / run_id / "tasks" / t).exists() for t in skipped)
    assert (tmp_path / "night.out").read_text() == render_markdown(summary) + "\n"
    assert render_markdown(summary) in stop.stdout


def test_stop_of_a_night_that_is_not_there_is_bad_input(tmp_path, temporal_address):
    """A run id with no night on the cluster: exit 2 naming it, nothing signalled. (A process
    that started Temporal's client ends through `os._exit`, so it runs as its own process.)"""
    config = cluster_config(tmp_path / "cluster.yaml", temporal_address, "stop")
    argv = [*HARNESS, "stop", "20261126-0100-none", "--config", str(config)]

    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)

    assert done.returncode == 2, done.stderr[-2000:]
    assert "no night 20261126-0100-none on Temporal at" in done.stderr
