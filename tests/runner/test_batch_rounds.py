"""The night at batch price on the simulator, end to end: every step in rounds through
sim.SimBatch, the deadline sending the rest interactive, kill -9 mid-round and resume."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests._night import (
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

FOUR = tuple(Task(f"t{i}", max_attempts=3) for i in range(4))
WAIT_S = 120
STEPS = "[write, review, rewrite, fix]"


def _config(tmp_path: Path, deadline: str = "10m") -> Path:
    path = tmp_path / "harness.yaml"
    path.write_text(
        f'batch: {{enabled: true, steps: {STEPS}, deadline: "{deadline}", poll_s: 0.05,'
        " max_poll_s: 0.2, round_window_s: 0.5}\n"
    )
    return path


def _script(runs: Path, **script: object) -> None:
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "sim-batches.json").write_text(json.dumps({"script": script, "batches": {}}))


def _vendor(runs: Path) -> dict:
    return json.loads((runs / "sim-batches.json").read_text())


def _calls(runs: Path, run_id: str) -> list[dict]:
    return db_dicts(
        runs / "harness.db",
        "SELECT task_id, step, attempt, cost_usd, stop_reason FROM calls WHERE run_id=?"
        " AND stop_reason NOT IN ('in_flight', 'error') ORDER BY id",
        (run_id,),
    )


def _interactive(root: Path) -> int:
    """Calls bought interactively (a batch entry's line says service_tier batch)."""
    return sum(
        1 for e in events(root) if e["event"] == "call_finished" and e["service_tier"] != "batch"
    )


def test_every_step_goes_in_rounds_at_half_price_with_the_same_outcomes(tmp_path) -> None:
    """Writes, reviews, rewrites and fixes all by batch (no interactive call), each call at
    the batch price of its interactive twin, a batch per round and model, the same results."""
    tasks = write_tasks(tmp_path / "tasks", FOUR)
    interactive = tmp_path / "interactive.yaml"
    interactive.write_text("batch: {enabled: false}\n")  # its twin, every call bought at once
    _, plain, plain_root = run_cli(
        tasks, tmp_path / "plain", "--seed", "7", "--rerun", "--config", str(interactive)
    )
    runs = tmp_path / "batched"
    _script(runs, polls_to_end=1)

    _, summary, root = run_cli(
        tasks, runs, "--seed", "7", "--rerun", "--config", str(_config(tmp_path))
    )

    assert _interactive(root) == 0 and _interactive(plain_root) > 0
    full = _calls(tmp_path / "plain", plain_root.name)
    half = _calls(runs, root.name)

    def priced(calls: list[dict]) -> dict[tuple, Decimal]:
        return {(c["task_id"], c["step"], c["attempt"]): Decimal(c["cost_usd"]) for c in calls}

    batch, listed = priced(half), priced(full)
    assert batch.keys() == listed.keys()
    # Anthropic's batch discount covers cache reads too; Gemini's (the review) is not said
    # to, so its cache reads stay at the list rate (harness/data/prices.yaml service_tiers).
    anthropic = [k for k in batch if k[1] != "review"]
    assert {k: 2 * batch[k] for k in anthropic} == {k: listed[k] for k in anthropic}
    assert all(listed[k] / 2 <= batch[k] < listed[k] for k in batch if k[1] == "review")
    steps = {c["step"] for c in half}
    assert {"write", "review", "fix"} <= steps
    batches = _vendor(runs)["batches"].values()
    rounds = count(root, "batch_round")  # one batch per round and model (review: the cheap)
    assert rounds < len(batches) <= 2 * rounds and rounds > 2
    same = ("id", "status", "passed", "total", "best_attempt")
    assert [{k: t[k] for k in same} for t in summary["tasks"]] == [
        {k: t[k] for k in same} for t in plain["tasks"]
    ]


def test_past_the_deadline_the_remaining_steps_go_interactive(tmp_path) -> None:
    """A vendor that never ends: the round is cancelled at the deadline and every step is
    bought interactively from then on, the night still finishing."""
    tasks = write_tasks(tmp_path / "tasks", FOUR[:2])
    runs = tmp_path / "runs"
    _script(runs, polls_to_end=None)

    _, summary, root = run_cli(tasks, runs, "--seed", "3", "--config", str(_config(tmp_path, "3s")))

    assert count(root, "batch_deadline_cancel") == 1 and count(root, "batch_round") == 1
    assert _interactive(root) == len(_calls(runs, root.name)) > 0
    assert summary["status"] == "completed"


def test_kill_9_in_the_middle_of_a_round_then_resume_buys_nothing_twice(tmp_path) -> None:
    """Killed while a later round's batch is out: --resume re-attaches to it (no second
    batch for it), and every (task, step, attempt) has exactly one answered call."""
    tasks = write_tasks(tmp_path / "tasks", FOUR[:3])
    runs = tmp_path / "runs"
    _script(runs, ready_after_s=1.5)  # each batch ends 1.5 s after its submission
    config = str(_config(tmp_path))
    proc = start_cli(tasks, runs, "--seed", "4", "--config", config, log=tmp_path / "log")
    try:
        wait_for(
            lambda: count(runs / (latest_run_id(runs) or "x"), "batch_submitted") >= 2,
            WAIT_S,
            proc,
        )
        assert proc.poll() is None, "the run ended before its second round"
        proc.kill()
        proc.wait()
    finally:
        kill_tree(proc)
    run_id = latest_run_id(runs) or ""
    before = len(_vendor(runs)["batches"])

    _, summary, root = run_cli(tasks, runs, "--seed", "4", "--config", config, "--resume")

    assert root.name == run_id and count(root, "batch_reattached") >= 1
    calls = _calls(runs, run_id)
    keys = [(c["task_id"], c["step"], c["attempt"]) for c in calls]
    assert len(keys) == len(set(keys)) > 0
    submitted = {b["handle"]["display_name"] for b in _vendor(runs)["batches"].values()}
    assert len(submitted) == len(_vendor(runs)["batches"]) >= before
    assert _interactive(root) == 0
    assert summary["status"] == "completed"
