"""Helpers for the tests that run a night on a Temporal dev server with real worker processes:
the cluster config, workers started and stopped by pid, and what a worker's shards do now."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HARNESS = [sys.executable, "-m", "harness"]


def copy_example(where: Path) -> Path:
    """tasks/example copied to `where` without its outputs: the copy's tasks.yaml."""
    shutil.copytree(REPO / "tasks" / "example", where, ignore=shutil.ignore_patterns("out"))
    return where / "tasks.yaml"


def cluster_config(path: Path, address: str, queue: str, database: str | None = None) -> Path:
    """A cluster.yaml for the dev server at `address`, a task queue of the test's own, and a
    short heartbeat so a dead worker's task moves on quickly."""
    text = "scale:\n  engine: temporal\n"
    text += f"  temporal: {{address: '{address}', task_queue: {queue}, heartbeat_s: 2}}\n"
    if database is not None:
        text += f"  database: '{database}'\n"
    path.write_text(text)
    return path


@contextlib.contextmanager
def workers(config: Path, count: int, concurrency: int = 2) -> Iterator[list[subprocess.Popen]]:
    """`count` `harness worker` processes for the block, then SIGTERM to each (by pid), waited."""
    argv = [*HARNESS, "worker", "--config", str(config), "--concurrency", str(concurrency)]
    procs = [subprocess.Popen(argv) for _ in range(count)]
    try:
        yield procs
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait()


def _descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        children = Path(f"/proc/{parent}/task/{parent}/children")
        try:
            kids = [int(c) for c in children.read_text().split()]
        except OSError:
            kids = []
        found += kids
        queue += kids
    return found


def shard_task(worker: int) -> str | None:
    """The task a worker's shard process runs now, if any: a process below the worker (its
    shards are forked from its warm process) holding a file of a task's run folder open."""
    for pid in _descendants(worker):
        try:
            targets = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue
        for target in targets:
            found = re.search(r"/tasks/([^/]+)/", target)
            if found:
                return found.group(1)
    return None


def has_paid(run_dir: Path, task_id: str) -> bool:
    """Whether the task's shard has finished a call (it is mid-task, past its start-up)."""
    return any(
        '"call_finished"' in p.read_text()
        for p in run_dir.glob(f"*/tasks/{task_id}/*/events.jsonl")
    )


def shard_events(run_dir: Path) -> list[dict]:
    """Every event every shard of the nights under `run_dir` wrote, each run folder once."""
    return [
        json.loads(line)
        for path in run_dir.glob("*/tasks/*/*/events.jsonl")
        if "latest" not in path.parts  # the symlinks name the same folders again
        for line in path.read_text().splitlines()
    ]
