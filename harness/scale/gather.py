"""A distributed night read as one run.

Each task of a night on Temporal runs as today's `harness run --only ID` in a folder of its own
(`<night>/tasks/<task>/`, with its own store), so a retry is today's resume. When the night
closes, `gather` lays the night's own folder out as the run directory contract says for every
run (`events.jsonl`, `attempts/<task>/`, `calls/<task>/`) and records the night in the run
dir's store under its run id. `summary`, `events`, `tasks`, `status`, `compare`,
`export prefs` and `--provider replay --replay-from` then read a distributed night exactly as
a local one, with no second reader. The task folders stay as they are.

Gathering again (a close retried after a crash) replaces what the last one wrote: the store's
rows in one transaction, the events file atomically, the copied files by overwriting.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.fsio import write_atomic
from harness.results import RunStatus
from harness.store import RunFolder, RunInfo, RunParams, Store, resolve_run

__all__ = ["gather"]

# The shards' own start and end lines are replaced by the night's.
_RUN_EVENTS = frozenset({"run_started", "run_finished"})


def gather(
    root: Path,
    summary: dict[str, Any],
    spent: Decimal,
    *,
    tasks: Path,
    seed: int,
) -> None:
    """Lay the night at `root` out as one run (the module doc), from its tasks' folders and
    its merged `summary` (summary.json's fields); `spent` is the exact spend."""
    shards = [(t["id"], s) for t in summary["tasks"] if (s := _shard(root, t["id"])) is not None]
    for task_id, shard in shards:
        for part in ("attempts", "calls"):
            source = shard / part / task_id
            if source.is_dir():
                shutil.copytree(source, root / part / task_id, dirs_exist_ok=True)
    write_atomic(root / "events.jsonl", _events(summary, spent, [s for _, s in shards]))
    info = RunInfo(
        run_id=summary["run_id"],
        started_at=dt.datetime.fromisoformat(summary["started_at"]),
        finished_at=dt.datetime.fromisoformat(summary["finished_at"]),
        status=RunStatus(summary["status"]),
        provider=summary["provider"],
        cap_usd=Decimal(_text(summary["budget"]["cap_usd"])),
        params=RunParams(tasks=tasks, seed=seed if summary["provider"] == "sim" else None),
        resumes=0,
    )
    store = Store.open(root.parent / "harness.db")
    try:
        store.adopt(info, [(root / "tasks" / t / "harness.db", s.name) for t, s in shards])
    finally:
        store.close()


def _shard(root: Path, task_id: str) -> Path | None:
    """The task's run folder, or None for a task that never started (a stopped night)."""
    folder = root / "tasks" / task_id
    if not (folder / "latest").exists():
        return None
    return resolve_run(folder)


def _events(summary: dict[str, Any], spent: Decimal, shards: Sequence[Path]) -> str:
    """The tasks' events in time order (a stable sort: each file is already in order) under
    the night's run id, between the night's own run_started and run_finished."""
    run_id = summary["run_id"]
    found = [e for shard in shards for e in RunFolder(shard).events()]
    found = [e for e in found if e["event"] not in _RUN_EVENTS]
    for event in found:
        if "run_id" in event:
            event["run_id"] = run_id
    found.sort(key=lambda e: str(e.get("timestamp", "")))
    started = {
        "run_id": run_id,
        "tasks": len(summary["tasks"]),
        "provider": summary["provider"],
        "cap_usd": _text(summary["budget"]["cap_usd"]),
        "spent_usd": "0",
        "event": "run_started",
        "level": "info",
        "timestamp": _stamp(summary["started_at"]),
    }
    finished = {
        "status": summary["status"],
        "spent_usd": str(spent),
        "event": "run_finished",
        "level": "info",
        "timestamp": _stamp(summary["finished_at"]),
    }
    return "".join(json.dumps(e) + "\n" for e in [started, *found, finished])


def _text(usd: float | str) -> str:
    """summary.json's dollar figure as the exact decimal text the store and events keep."""
    return format(Decimal(str(usd)).normalize(), "f")


def _stamp(iso: str) -> str:
    """summary.json's time as the events' UTC `...Z` timestamp."""
    when = dt.datetime.fromisoformat(iso).astimezone(dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
