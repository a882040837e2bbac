"""Batch mode on the simulator, end to end: the CLI night, the deadline, kill -9 and resume."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests._night import (
    SOLUTION,
    Task,
    count,
    db_dicts,
    events,
    kill_tree,
    latest_run_id,
    run_cli,
    start_cli,
    wait_for,
    write_tasks,
)

pytestmark = pytest.mark.slow

SIX = tuple(Task(f"t{i}", max_attempts=3) for i in range(6))
WAIT_S = 120  # a hung run fails the test instead of hanging the suite


def _config(tmp_path: Path, deadline: str = "10m") -> Path:
    path = tmp_path / "harness.yaml"
    path.write_text(
        f'batch: {{enabled: true, steps: [write], deadline: "{deadline}", poll_s: 0.05,'
        " max_poll_s: 0.2}\n"
    )
    return path


def _script(runs: Path, **script: object) -> None:
    """What the simulated vendor will do, read by every process that opens the run dir."""
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "sim-batches.json").write_text(json.dumps({"script": script, "batches": {}}))


def _vendor(runs: Path) -> dict:
    return json.loads((runs / "sim-batches.json").read_text())


def _write_calls(root: Path) -> dict[str, Decimal]:
    rows = db_dicts(
        root.parent / "harness.db",
        "SELECT task_id, cost_usd FROM calls WHERE run_id=? AND step='write' AND attempt=1",
        (root.name,),
    )
    return {r["task_id"]: Decimal(r["cost_usd"]) for r in rows}


def _interactive(root: Path, step: str, attempt: int | None = 1) -> int:
    """Calls of `step` bought interactively (at attempt `attempt`; None: any)."""
    return sum(
        1
        for e in events(root)
        if e["event"] == "call_finished"
        and e["service_tier"] != "batch"
        and e["step"] == step
        and attempt in (None, e["attempt"])
    )


def test_a_batch_night_writes_at_half_price_and_ends_like_an_interactive_one(tmp_path) -> None:
    """One batch for the one provider+model, no interactive write, each write at half the
    interactive price; reviews and fixes interactive; the same results; the saving shown."""
    tasks = write_tasks(tmp_path / "tasks", SIX)
    interactive = tmp_path / "interactive.yaml"
    interactive.write_text("batch: {enabled: false}\n")  # its twin, every call bought at once
    _, plain, plain_root = run_cli(
        tasks, tmp_path / "plain", "--seed", "7", "--rerun", "--config", str(interactive)
    )
    runs = tmp_path / "batched"
    _script(runs, polls_to_end=2)

    code, summary, root = run_cli(
        tasks, runs, "--seed", "7", "--rerun", "--config", str(_config(tmp_path))
    )

    batches = _vendor(runs)["batches"]
    assert len(batches) == 1 and len(next(iter(batches.values()))["items"]) == len(SIX)
    assert _interactive(root, "write") == 0 and _interactive(plain_root, "write") == len(SIX)
    assert _interactive(root, "review") == _interactive(plain_root, "review") > 0
    assert _interactive(root, "fix", None) == _interactive(plain_root, "fix", None)
    full, half = _write_calls(plain_root), _write_calls(root)
    assert {t: 2 * c for t, c in half.items()} == full
    same = ("id", "status", "passed", "total", "best_attempt")
    assert [{k: t[k] for k in same} for t in summary["tasks"]] == [
        {k: t[k] for k in same} for t in plain["tasks"]
    ]
    assert all(t["batch"]["by_batch"] for t in summary["tasks"])
    batch = summary["batch"]
    assert (batch["submitted"], batch["succeeded"], batch["fell_back"]) == (6, 6, 0)
    assert Decimal(batch["saved_usd_exact"]) == sum(full.values()) - sum(half.values())
    assert "requests by batch" in (root / "summary.md").read_text()
    assert code in (0, 1)


def test_batch_steps_empty_sends_every_write_interactively(tmp_path) -> None:
    """`batch: {enabled: true, steps: []}` batches no step: no batch is made and every write
    is an interactive call (the key is read, not only validated)."""
    tasks = write_tasks(tmp_path / "tasks", SIX[:2])
    runs = tmp_path / "runs"
    _script(runs, polls_to_end=1)
    config = tmp_path / "harness.yaml"
    config.write_text("batch: {enabled: true, steps: [], poll_s: 0.05, max_poll_s: 0.2}\n")

    _, _, root = run_cli(tasks, runs, "--seed", "7", "--rerun", "--config", str(config))

    assert (_vendor(runs)["batches"], _interactive(root, "write")) == ({}, 2)


def test_a_batch_that_never_ends_is_cancelled_at_the_deadline(tmp_path) -> None:
    """At the deadline the batch is cancelled, its entries come back canceled, their
    reservations are released and every write runs interactively at the list price."""
    tasks = write_tasks(tmp_path / "tasks", [*SIX[:3], Task("done")])
    (tasks.parent / "out").mkdir(exist_ok=True)
    (tasks.parent / "out" / "done_service.py").write_text(SOLUTION)  # starts from it: no write
    runs = tmp_path / "runs"
    _script(runs, polls_to_end=None)

    code, summary, root = run_cli(
        tasks, runs, "--seed", "3", "--budget-usd", "5", "--config", str(_config(tmp_path, "3s"))
    )

    assert summary["status"] == "completed" and code in (0, 1)
    assert count(root, "batch_deadline_cancel") == 1
    batch = summary["batch"]
    assert (batch["canceled"], batch["fell_back"], batch["succeeded"]) == (3, 3, 0)
    assert batch["saved_usd"] == 0
    assert _interactive(root, "write") == 3
    assert [t.get("batch", {}).get("outcome") for t in summary["tasks"]] == [
        "canceled",
        "canceled",
        "canceled",
        None,
    ]
    order = [
        (e["event"], e.get("task_id"))
        for e in events(root)
        if e["event"] in ("task_started", "batch_deadline_cancel")
    ]
    assert order[:2] == [("task_started", "done"), ("batch_deadline_cancel", None)]
    assert summary["budget"]["spent_usd"] <= 5
    assert any("3 of 3 batch entries did not succeed" in n for n in summary["notes"])


def _kill_at(tasks: Path, runs: Path, config: str, event: str, log: Path) -> str:
    """A real `harness run` process, SIGKILLed once its run logged `event`; the run id."""
    proc = start_cli(tasks, runs, "--seed", "4", "--config", config, log=log)
    try:
        wait_for(lambda: count(runs / (latest_run_id(runs) or "x"), event), WAIT_S, proc)
        assert proc.poll() is None, f"the run ended before {event}"
        proc.kill()
        proc.wait()
    finally:
        kill_tree(proc)
    return latest_run_id(runs) or ""


def test_kill_9_after_the_batch_is_created_then_resume_submits_nothing_again(tmp_path) -> None:
    """The batch recorded before the kill is re-attached to on --resume: no second create,
    its results used, no write bought interactively."""
    tasks = write_tasks(tmp_path / "tasks", SIX[:3])
    runs = tmp_path / "runs"
    _script(runs, polls_to_end=None)
    config = str(_config(tmp_path))
    run_id = _kill_at(tasks, runs, config, "batch_submitted", tmp_path / "log")
    vendor = _vendor(runs)
    vendor["script"] = {"polls_to_end": 1}  # the vendor finishes the batch meanwhile
    (runs / "sim-batches.json").write_text(json.dumps(vendor))

    _, summary, root = run_cli(tasks, runs, "--seed", "4", "--config", config, "--resume")

    assert root.name == run_id and len(_vendor(runs)["batches"]) == 1
    assert count(root, "batch_reattached") == 3
    assert _interactive(root, "write") == 0
    assert [t["batch"]["by_batch"] for t in summary["tasks"]] == [True] * 3


def test_kill_9_after_results_were_settled_buys_no_write_again(tmp_path) -> None:
    """Killed once the batch's replies were settled and tasks went on: the resume reuses
    every settled write (one answered row each, at the batch price) and creates no batch."""
    tasks = write_tasks(tmp_path / "tasks", SIX[:3])
    runs = tmp_path / "runs"
    _script(runs, polls_to_end=1)
    config = str(_config(tmp_path))
    run_id = _kill_at(tasks, runs, config, "call_reused", tmp_path / "log")

    _, summary, root = run_cli(tasks, runs, "--seed", "4", "--config", config, "--resume")

    rows = db_dicts(
        runs / "harness.db",
        "SELECT task_id, count(*) AS n FROM calls WHERE run_id=? AND step='write' AND attempt=1"
        " AND stop_reason != 'in_flight' GROUP BY task_id",  # in flight: killed mid-record
        (run_id,),
    )
    assert root.name == run_id and len(_vendor(runs)["batches"]) == 1
    assert {r["task_id"]: r["n"] for r in rows} == {"t0": 1, "t1": 1, "t2": 1}
    assert _interactive(root, "write") == 0
    assert [t["batch"]["by_batch"] for t in summary["tasks"]] == [True] * 3
