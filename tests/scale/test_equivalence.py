"""The night on Temporal equals the night on the local pool, even when a worker is killed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from decimal import ROUND_CEILING, Decimal
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")
psycopg = pytest.importorskip("psycopg", reason="needs the scale extra (psycopg)")

REPO = Path(__file__).resolve().parents[2]
HARNESS = [sys.executable, "-m", "harness"]
SEED = "2"
pytestmark = pytest.mark.slow


def _copy_example(where: Path) -> Path:
    shutil.copytree(REPO / "tasks" / "example", where, ignore=shutil.ignore_patterns("out"))
    return where / "tasks.yaml"


def _outputs(root: Path) -> dict[str, str]:
    out = root / "out"
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def _shard_task(worker: int) -> str | None:
    """The task a worker's shard process runs now, from its command line, if any."""
    children = Path(f"/proc/{worker}/task/{worker}/children")
    for child in children.read_text().split() if children.exists() else []:
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"harness.scale.shard" in argv:
            return json.loads(argv[argv.index(b"harness.scale.shard") + 1])["task_id"]
    return None


def _has_paid(night_dir: Path, task_id: str) -> bool:
    """Whether the task's shard has finished a call (it is mid-task, past its start-up)."""
    return any(
        '"call_finished"' in p.read_text()
        for p in night_dir.glob(f"*/tasks/{task_id}/*/events.jsonl")
    )


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
    local_tasks = _copy_example(tmp_path / "local")
    cluster_tasks = _copy_example(tmp_path / "cluster")
    config = tmp_path / "cluster.yaml"
    config.write_text(
        "scale:\n  engine: temporal\n"
        f"  temporal: {{address: '{temporal_address}', task_queue: eq, heartbeat_s: 2}}\n"
        f"  database: '{database}'\n"
    )
    run = [*HARNESS, "run", "--provider", "sim", "--seed", SEED, "--log-level", "warning"]
    local = subprocess.run([*run, str(local_tasks), "--run-dir", str(tmp_path / "lr")], cwd=REPO)
    workers = [
        subprocess.Popen([*HARNESS, "worker", "--config", str(config), "--concurrency", "2"])
        for _ in range(2)
    ]
    try:
        night = subprocess.Popen(
            [*run, str(cluster_tasks), "--run-dir", str(tmp_path / "cr"), "--config", str(config)]
        )
        task = None
        while night.poll() is None and not (task and _has_paid(tmp_path / "cr", task)):
            task = task or _shard_task(workers[0].pid)
            time.sleep(0.05)  # until worker 0's task has paid for a call
        os.kill(workers[0].pid, signal.SIGKILL)
        assert night.wait() == local.returncode
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            w.wait()
    a = json.loads((tmp_path / "lr" / "latest" / "summary.json").read_text())
    b = json.loads((tmp_path / "cr" / "latest" / "summary.json").read_text())
    events = [
        json.loads(line)
        for path in (tmp_path / "cr").glob("*/tasks/*/*/events.jsonl")
        if "latest" not in path.parts  # the symlinks name the same folders again
        for line in path.read_text().splitlines()
    ]
    finished = [(e["task_id"], e["n"]) for e in events if e["event"] == "attempt_finished"]
    started = [e for e in events if e["event"] == "run_started"]
    scopes = _scopes(database)
    night_spent, night_held = scopes[f"run:{b['run_id']}"]

    assert workers[0].returncode == -signal.SIGKILL
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
