"""A distributed night, once closed, reads as one run: every morning command and replay see
it exactly as they see the same night run on the local pool."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from harness.scale.activities import close_night
from harness.scale.payloads import Closing, Night, Shard, night_dir

REPO = Path(__file__).resolve().parents[2]
HARNESS = [sys.executable, "-m", "harness"]
IDS = ["orders", "users"]
pytestmark = pytest.mark.slow


def _copy_example(where: Path) -> Path:
    shutil.copytree(REPO / "tasks" / "example", where, ignore=shutil.ignore_patterns("out"))
    return where / "tasks.yaml"


def _cli(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*HARNESS, *argv], capture_output=True, text=True, cwd=REPO)
    if check and done.returncode not in (0, 1):
        raise AssertionError(f"harness {' '.join(argv)} exited {done.returncode}: {done.stderr}")
    return done


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> tuple[Path, Path, Closing]:
    """The same two tasks and seed, run on the local pool, and as a Temporal night's shards
    run them (`python -m harness.scale.shard`, one per task), then closed."""
    tmp = tmp_path_factory.mktemp("gather")
    local_tasks = _copy_example(tmp / "local")
    _cli("run", str(local_tasks), "--provider", "sim", "--seed", "2", "--only", *IDS,
         "--run-dir", str(tmp / "lr"), "--log-level", "warning")  # fmt: skip
    night = Night(
        run_id="20261126-040000-night",
        tasks=str(_copy_example(tmp / "cluster")),
        run_dir=str(tmp / "cr"),
        task_count=len(IDS),
        provider="sim",
        seed=2,
        cap_usd="30",
        config=None,
        heartbeat_s=5,
    )
    for task_id in IDS:
        shard = json.dumps(Shard(night, task_id).to_json())
        subprocess.run([sys.executable, "-m", "harness.scale.shard", shard], check=False)
    closing = Closing(night, IDS, stopped=False)
    close_night(closing)
    return (tmp / "lr" / "latest").resolve(), night_dir(night), closing


def _events(root: Path) -> list[dict]:
    return [json.loads(line) for line in _cli("events", str(root), "--json").stdout.splitlines()]


def _steps(events: list[dict]) -> Counter:
    kept = ("call_finished", "tests_ran", "attempt_finished", "task_finished")
    return Counter(
        (e.get("task_id"), e["event"], e.get("attempt", e.get("n")))
        for e in events
        if e["event"] in kept
    )


def test_the_night_folder_has_the_local_runs_events_in_one_file(nights):
    """`harness events` on the night: the same task events as the local night, under the
    night's run id, between one run_started and one run_finished."""
    local, night, _ = nights
    mine, theirs = _events(night), _events(local)
    assert _steps(mine) == _steps(theirs) != Counter()
    assert [e["event"] for e in mine].count("run_started") == 1
    assert mine[0]["event"] == "run_started" and mine[-1]["event"] == "run_finished"
    assert {e["run_id"] for e in mine if "run_id" in e} == {night.name}


def test_compare_reads_the_night_as_a_run_and_finds_it_equal(nights):
    """`harness compare LOCAL NIGHT`: every task the same (status, passes, cost, attempts)."""
    local, night, _ = nights
    data = json.loads(_cli("compare", str(local), str(night), "--json").stdout)
    rows = [r for r in data["tasks"] if r["id"] in IDS]  # the local --only run lists the rest
    assert sorted(r["id"] for r in rows) == sorted(IDS)
    assert all(row["a"] == row["b"] and row["changes"] == ["same"] for row in rows), rows


def test_attempts_and_calls_are_where_the_run_directory_contract_puts_them(nights):
    """The night's attempts/<task>/ and calls/<task>/ hold the same files as the local run's."""
    local, night, _ = nights
    for part in ("attempts", "calls"):
        for task_id in IDS:
            names = sorted(p.name for p in (local / part / task_id).iterdir())
            assert names == sorted(p.name for p in (night / part / task_id).iterdir())
            assert names


def test_export_prefs_reads_the_nights_store(nights, tmp_path):
    """`harness export prefs` on the night writes the same pairs as on the local run."""
    local, night, _ = nights
    out = {}
    for name, root in (("local", local), ("night", night)):
        _cli("export", "prefs", str(root), "--out", str(tmp_path / f"{name}.jsonl"))
        out[name] = [
            {k: v for k, v in json.loads(line).items() if "run" not in k}
            for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()
        ]
    assert out["night"] == out["local"]


def test_a_replay_from_the_night_spends_nothing_and_ships_the_same(nights, tmp_path):
    """`--provider replay --replay-from NIGHT` serves every call from the night's store."""
    _, night, _ = nights
    tasks = _copy_example(tmp_path / "replay")
    _cli("run", str(tasks), "--provider", "replay", "--replay-from", str(night),
         "--only", *IDS, "--run-dir", str(tmp_path / "rr"), "--log-level", "warning")  # fmt: skip
    again = json.loads((tmp_path / "rr" / "latest" / "summary.json").read_text())
    first = json.loads((night / "summary.json").read_text())
    assert Decimal(again["budget"]["spent_usd"]) == 0
    assert [(t["id"], t["status"], t["passed"]) for t in again["tasks"] if t["id"] in IDS] == [
        (t["id"], t["status"], t["passed"]) for t in first["tasks"]
    ]


def test_closing_again_gathers_the_same_rows_once(nights):
    """A close retried after a crash replaces what the first gathered: no row twice."""
    _, night, spec = nights

    def counts() -> dict[str, int]:
        db = sqlite3.connect(night.parent / "harness.db")
        try:
            sql = "SELECT count(*) FROM {} WHERE run_id=?"
            return {
                t: db.execute(sql.format(t), (night.name,)).fetchone()[0]
                for t in ("runs", "calls", "attempts", "tasks")
            }
        finally:
            db.close()

    before = counts()
    close_night(spec)
    assert counts() == before
    assert before["calls"] > 0 and before["runs"] == 1


def test_a_stopped_task_that_wrote_no_summary_still_counts_what_it_spent(nights, tmp_path):
    """A shard killed before its summary, then the night stopped: the night's summary counts
    the calls its store holds (the ones gather adopts), not zero."""
    from harness.results import usd
    from harness.scale import activities

    _, night, closing = nights
    copy = replace(closing.night, run_dir=str(tmp_path))
    shutil.copytree(night / "tasks" / "orders", night_dir(copy) / "tasks" / "orders", symlinks=True)
    (night_dir(copy) / "tasks" / "orders" / "latest" / "summary.json").unlink()

    part = activities._not_started(copy, "orders")

    first = json.loads((night / "summary.json").read_text())
    orders = next(t for t in first["tasks"] if t["id"] == "orders")
    assert part["spent"] > 0
    assert usd(part["spent"]) == orders["cost_usd"]  # summary.json's rounding
