"""The night on Temporal equals the night on the local pool, even when a worker is killed."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from collections import Counter
from decimal import ROUND_CEILING, Decimal
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")
psycopg = pytest.importorskip("psycopg", reason="needs the scale extra (psycopg)")

from tests.scale.cluster import (  # noqa: E402
    HARNESS,
    REPO,
    cluster_config,
    copy_example,
    has_paid,
    shard_events,
    shard_task,
    workers,
)

SEED = "2"
pytestmark = pytest.mark.slow


def _outputs(root: Path) -> dict[str, str]:
    out = root / "out"
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


_TIMING = ("started_at", "finished_at", "run_id")


def _costless(item: dict) -> dict:
    return {k: v for k, v in item.items() if k != "cost_usd"}


def _comparable(summary: dict, root: Path) -> dict:
    """The summary but for timings, ids and spend, outputs relative to the task list's copy.
    Spend differs by design: a call in flight when its worker died is charged in full."""
    tasks = [
        {
            **_costless(t),
            "output": str(Path(t["output"]).relative_to(root)),
            "attempts": [_costless(a) for a in t["attempts"]],
        }
        for t in summary["tasks"]
    ]
    kept = {k: v for k, v in summary.items() if k not in (*_TIMING, "budget")}
    return {**kept, "tasks": tasks, "cap_usd": summary["budget"]["cap_usd"]}


def _scopes(url: str) -> dict[str, tuple[Decimal, Decimal]]:
    """Every scope of the shared ledger: (spent, held)."""
    with psycopg.connect(url) as db:
        spent = dict(db.execute("SELECT name, spent_usd FROM scopes").fetchall())
        held = dict(db.execute("SELECT scope, sum(usd) FROM holds GROUP BY scope").fetchall())
    return {n: (Decimal(s), Decimal(held.get(n, 0))) for n, s in spent.items()}


def test_temporal_night_equals_local_night_with_a_worker_killed(
    tmp_path, temporal_address, database
):
    """Same tasks and seed: the local pool and two Temporal workers (one SIGKILLed mid-task)
    give the same statuses, best attempts, passes, summary (but for timings and the killed
    calls' spend) and shipped files, within the cap, with no attempt recorded twice; every
    shard held on the night's one run scope in the shared ledger, and none on the day."""
    local_tasks = copy_example(tmp_path / "local")
    cluster_tasks = copy_example(tmp_path / "cluster")
    config = cluster_config(tmp_path / "cluster.yaml", temporal_address, "eq", database)
    run = [*HARNESS, "run", "--provider", "sim", "--seed", SEED, "--log-level", "warning"]
    # Rounds run on one machine only (docs/scale.md): the local night is bought call by call
    # too, as the Temporal night is.
    interactive = tmp_path / "local.yaml"
    interactive.write_text("batch: {enabled: false}\n")
    local = subprocess.run(
        [*run, str(local_tasks), "--run-dir", str(tmp_path / "lr"), "--config", str(interactive)],
        cwd=REPO,
    )
    with workers(config, 2) as procs:
        night = subprocess.Popen(
            [*run, str(cluster_tasks), "--run-dir", str(tmp_path / "cr"), "--config", str(config)]
        )
        task = None
        while night.poll() is None and not (task and has_paid(tmp_path / "cr", task)):
            task = task or shard_task(procs[0].pid)
            time.sleep(0.05)  # until worker 0's task has paid for a call
        os.kill(procs[0].pid, signal.SIGKILL)
        assert night.wait() == local.returncode
    a = json.loads((tmp_path / "lr" / "latest" / "summary.json").read_text())
    b = json.loads((tmp_path / "cr" / "latest" / "summary.json").read_text())
    events = shard_events(tmp_path / "cr")
    finished = [(e["task_id"], e["n"]) for e in events if e["event"] == "attempt_finished"]
    started = [e for e in events if e["event"] == "run_started"]
    scopes = _scopes(database)
    night_spent, night_held = scopes[f"run:{b['run_id']}"]

    assert procs[0].returncode == -signal.SIGKILL
    assert len(started) > len(b["tasks"])  # the killed worker's task was started again
    assert _comparable(b, cluster_tasks.parent) == _comparable(a, local_tasks.parent)
    assert _outputs(cluster_tasks.parent) == _outputs(local_tasks.parent)
    assert a["budget"]["spent_usd"] <= b["budget"]["spent_usd"] <= b["budget"]["cap_usd"]
    assert list(scopes) == [f"run:{b['run_id']}"]  # one run scope; simulated spend no day
    in_ledger = (night_spent + night_held).quantize(Decimal("0.000001"), ROUND_CEILING)
    assert Decimal(str(b["budget"]["spent_usd"])) <= in_ledger
    assert night_spent + night_held <= Decimal(str(b["budget"]["cap_usd"]))
    assert [k for k, n in Counter(finished).items() if n > 1] == []
    assert len(finished) == sum(len(t["attempts"]) for t in b["tasks"])
