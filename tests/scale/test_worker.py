"""`harness worker` on a Temporal dev server: `--concurrency N` runs at most N tasks at once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from tests._night import Task, write_tasks  # noqa: E402
from tests.scale.cluster import HARNESS, cluster_config, workers  # noqa: E402

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
    assert all(later[0] > earlier[1] for earlier, later in zip(spans, spans[1:]))
