"""Crash safety of a real `harness run` process: kill -9 then --resume, SIGTERM and SIGINT."""

from __future__ import annotations

import ast
import json
import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from tests._night import (
    Task,
    count,
    db_dicts,
    db_rows,
    events,
    kill_tree,
    latest_run_id,
    start_cli,
    wait_for,
    write_tasks,
)

pytestmark = pytest.mark.slow

TASKS = (Task("alpha"), Task("beta"), Task("gamma"))
WAIT_S = 120  # a hung run fails the test instead of hanging the suite; not a speed assertion
MICRO = Decimal("0.000001")  # summary.json rounds dollars to the micro-dollar
LOOPS = "HARNESS_RESUME_LOOPS"


@dataclass(frozen=True)
class KillPoint:
    """Kill after the `after`-th `event` of the run, plus a random pause (lands anywhere: in a
    call, in a test run, between an attempt's file and its store row, in the ship)."""

    seed: int
    event: str
    after: int
    pause_s: float

    def __str__(self) -> str:
        return f"seed{self.seed}-{self.event}x{self.after}+{self.pause_s}s"


# Resuming an interactive night, call by call (resuming one in batch rounds:
# tests/runner/test_batch_rounds.py and test_batch.py): every night here buys interactively.
INTERACTIVE = "batch: {enabled: false}\n"


def _start(tasks: Path, runs: Path, *extra: str, log: Path) -> subprocess.Popen:
    config = tasks.parent / "interactive.yaml"
    config.write_text(INTERACTIVE)
    return start_cli(tasks, runs, *extra, "--config", str(config), log=log)


def _kill_points(n: int) -> list[KillPoint]:
    rng = random.Random(20261121)
    points = []
    for _ in range(n):
        event = rng.choice(("attempt_finished", "call_finished", "tests_ran"))
        after = rng.randint(1, 3) if event == "attempt_finished" else rng.randint(1, 5)
        points.append(KillPoint(rng.randrange(1000), event, after, round(rng.uniform(0, 0.4), 3)))
    return points


@pytest.fixture
def night(tmp_path: Path) -> tuple[Path, Path]:
    """Three tasks that each need a few attempts; (tasks.yaml, run dir)."""
    return write_tasks(tmp_path / "tasks", TASKS), tmp_path / "runs"


def _outputs_whole(tasks: Path) -> list[str]:
    """Every file at an output path is complete Python; returns the tasks whose output exists."""
    present = []
    for task in TASKS:
        path = tasks.parent / "out" / f"{task.id}_service.py"
        if path.exists():
            ast.parse(path.read_text(), str(path))
            present.append(task.id)
    return present


def _attempt_files(root: Path) -> dict[str, bytes]:
    folder = root / "attempts"
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _summary(runs: Path, run_id: str) -> dict:
    return json.loads((runs / run_id / "summary.json").read_text())


def _sql(runs: Path, sql: str, *params: object) -> list[tuple]:
    return db_rows(runs / "harness.db", sql, params)


@dataclass(frozen=True)
class Snapshot:
    """What the run store and the run folder hold for one run at one moment."""

    attempts: dict[tuple[str, int], dict]  # whole `attempts` rows by (task, n)
    calls: list[tuple]  # (id, task, attempt, step, cost, stop reason) in recording order
    tasks: dict[str, tuple[str, str | None]]  # task → (status, stop cause), for results recorded
    files: dict[str, bytes]  # attempts/<task>/<file> → content

    @classmethod
    def take(cls, runs: Path, run_id: str) -> Snapshot:
        rows = db_dicts(runs / "harness.db", "SELECT * FROM attempts WHERE run_id=?", (run_id,))
        calls = _sql(
            runs,
            "SELECT id, task_id, attempt, step, cost_usd, stop_reason FROM calls WHERE run_id=?"
            " ORDER BY id",
            run_id,
        )
        tasks = {
            task_id: (status, json.loads(result)["cause"])
            for task_id, status, result in _sql(
                runs, "SELECT task_id, status, result FROM tasks WHERE run_id=?", run_id
            )
        }
        attempts = {(r["task_id"], r["n"]): r for r in rows}
        return cls(attempts, calls, tasks, _attempt_files(runs / run_id))

    @property
    def spent(self) -> Decimal:
        return sum((Decimal(c[4]) for c in self.calls), Decimal(0))

    def done(self, task_id: str) -> bool:
        """The task ended on its own (not stopped by a signal or the budget): a resume keeps it."""
        status, cause = self.tasks.get(task_id, ("", None))
        ended = status in ("passed", "partial", "failed", "guardrail")
        return ended and cause not in ("budget", "run_stopped")

    def last_finished(self, task_id: str) -> int:
        return max((n for t, n in self.attempts if t == task_id), default=0)

    def best_passed(self, task_id: str) -> int | None:
        """The most tests any scored attempt of the task passed (None: nothing scored)."""
        rows = self.attempts.values()
        return max(
            (r["passed"] for r in rows if r["task_id"] == task_id and r["code"]), default=None
        )


def _current(runs: Path) -> Path:
    return runs / (latest_run_id(runs) or "none")


def _stop_at(proc, tasks: Path, runs: Path, event: str, after: int, pause_s: float = 0.0) -> None:
    """Wait for the run's `after`-th `event` (checking the outputs all along), then pause."""

    def reached() -> bool:
        _outputs_whole(tasks)  # at every moment, not only after the kill
        return count(_current(runs), event) >= after

    wait_for(reached, WAIT_S, proc)
    time.sleep(pause_s)
    assert proc.poll() is None, f"the run finished before the stop point ({event} x{after})"


def _kill_9(tasks: Path, runs: Path, log: Path, event: str, after: int, *extra: str, pause_s=0.0):
    """Start a run and SIGKILL the harness process (alone, as `kill -9 <pid>` would) once it
    reaches the stop point; returns the killed run's id."""
    proc = _start(tasks, runs, *extra, log=log)
    try:
        _stop_at(proc, tasks, runs, event, after, pause_s)
        proc.kill()
        proc.wait()
    finally:
        kill_tree(proc)  # then any test subprocess it left behind
    _outputs_whole(tasks)
    return latest_run_id(runs)


def _run(tasks: Path, runs: Path, log: Path, *extra: str) -> int:
    """A whole `harness run` process to its end; its exit code."""
    proc = _start(tasks, runs, *extra, log=log)
    try:
        return proc.wait(WAIT_S)
    finally:
        kill_tree(proc)


def _assert_kept(before: Snapshot, after: Snapshot) -> None:
    """Finished attempts, their candidate files and every call bought stay exactly as they were;
    per task only the attempt after its last finished one may be bought again."""
    assert {k: after.attempts[k] for k in before.attempts} == before.attempts
    for task_id, n in before.attempts:
        for name in (f"{task_id}/{n}.py", f"{task_id}/{n}.rejected.txt"):
            assert after.files.get(name) == before.files.get(name)
    assert after.calls[: len(before.calls)] == before.calls
    new_calls = after.calls[len(before.calls) :]
    # A reply received and recorded before the kill is reused, never bought again.
    answered = {c[1:4] for c in before.calls if c[5] not in ("in_flight", "error")}
    assert [c for c in new_calls if c[1:4] in answered] == []
    for task in TASKS:
        bought = {c[2] for c in before.calls if c[1] == task.id}
        again = {c[2] for c in new_calls if c[1] == task.id}
        if before.done(task.id):
            assert not again, f"{task.id} had finished, yet bought more calls"
        assert again & bought <= {before.last_finished(task.id) + 1}
        assert min(again, default=before.last_finished(task.id) + 1) > before.last_finished(task.id)


# HARNESS_RESUME_LOOPS=50 soaks the resume with 50 kill points (the first 4 are these 4).
@pytest.mark.parametrize("point", _kill_points(int(os.environ.get(LOOPS, "4"))), ids=str)
def test_kill_9_then_resume_loses_and_redoes_nothing_finished(night, tmp_path, point) -> None:
    """After a SIGKILL anywhere, --resume keeps every finished attempt, file and cent, redoes
    at most the in-flight attempt per task, never leaves a partial output, and completes."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    common = ("--seed", str(point.seed), "--concurrency", "2")
    run_id = _kill_9(tasks, runs, log, point.event, point.after, *common, pause_s=point.pause_s)
    before = Snapshot.take(runs, run_id)

    code = _run(tasks, runs, log, *common, "--resume")

    after, summary = Snapshot.take(runs, run_id), _summary(runs, run_id)
    assert code in (0, 1), log.read_text()[-3000:]
    assert (summary["run_id"], summary["status"]) == (run_id, "completed")
    assert [t["id"] for t in summary["tasks"]] == [t.id for t in TASKS]
    assert {t["status"] for t in summary["tasks"]} <= {"passed", "partial", "failed"}
    assert (runs / run_id / "summary.md").is_file() and (runs / run_id / "summary.html").is_file()
    _assert_kept(before, after)
    # The budget carries over: the summary's spend is everything the store says was paid.
    spent = Decimal(str(summary["budget"]["spent_usd"]))
    assert (
        before.spent.quantize(MICRO, ROUND_HALF_UP)
        <= spent
        == after.spent.quantize(MICRO, ROUND_HALF_UP)
    )  # the summary's rounding (results.usd)
    task_costs = sum(Decimal(str(t["cost_usd"])) for t in summary["tasks"])
    assert abs(task_costs - after.spent) <= len(TASKS) * MICRO
    # Every task's attempts are 1..k, those finished before the kill as they were recorded.
    for task in summary["tasks"]:
        assert [a["n"] for a in task["attempts"]] == list(range(1, len(task["attempts"]) + 1))
        for a in task["attempts"]:
            row = before.attempts.get((task["id"], a["n"]))
            if row is not None:
                for key in ("kind", "passed", "total", "extraction_error"):
                    assert a[key] == row[key]
        if task["output"] is not None:
            best = runs / run_id / "attempts" / task["id"] / f"{task['best_attempt']}.py"
            assert Path(task["output"]).read_text() == best.read_text()
    assert sorted(_outputs_whole(tasks)) == sorted(t["id"] for t in summary["tasks"] if t["output"])
    # One JSON event per line, each finished attempt logged once across kill and resume.
    logged = [
        json.loads(line) for line in (runs / run_id / "events.jsonl").read_text().splitlines()
    ]
    finished = [(e["task_id"], e["n"]) for e in logged if e["event"] == "attempt_finished"]
    assert len(finished) == len(set(finished))


def test_a_reply_recorded_before_the_kill_is_reused_not_bought_again(night, tmp_path) -> None:
    """Killed after a reply was recorded but before its attempt was: the resume redoes the
    attempt with that reply (call_reused), making no new request for it."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    common = ("--seed", "7", "--concurrency", "1")
    run_id = _kill_9(tasks, runs, log, "call_finished", 1, *common)
    before = Snapshot.take(runs, run_id)

    code = _run(tasks, runs, log, *common, "--resume")

    after = Snapshot.take(runs, run_id)
    first = before.calls[0]
    reused = [e for e in events(runs / run_id) if e["event"] == "call_reused"]
    assert code in (0, 1)
    assert not before.attempts  # the kill came before attempt 1 was recorded
    assert (first[1], first[2], first[3]) == ("alpha", 1, "write")
    assert [c for c in after.calls[len(before.calls) :] if c[1:4] == first[1:4]] == []
    assert (reused[0]["task_id"], reused[0]["attempt"], reused[0]["step"]) == ("alpha", 1, "write")
    _assert_kept(before, after)


START_UP = {  # what exists when the kill lands: the store file, the run's row, its folder, `latest`
    "store-created": lambda runs: (runs / "harness.db").exists(),
    "run-recorded": lambda runs: bool(
        (runs / "harness.db").exists() and _sql(runs, "SELECT run_id FROM runs")
    ),
    "folder-made": lambda runs: any(p.is_dir() for p in runs.glob("2*")),
    "latest-linked": lambda runs: (runs / "latest").is_symlink(),
}


@pytest.mark.parametrize("moment", list(START_UP), ids=list(START_UP))
def test_a_kill_during_start_up_leaves_a_run_resume_finishes(night, tmp_path, moment) -> None:
    """kill -9 at any moment of start-up: `--resume` then finishes that run (or, if nothing was
    recorded yet, starts the night afresh) instead of refusing with exit 2."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    proc = _start(tasks, runs, "--seed", "1", log=log)
    try:
        wait_for(lambda: _started(runs, START_UP[moment]), WAIT_S, proc)
        proc.kill()
        proc.wait()
    finally:
        kill_tree(proc)

    code = _run(tasks, runs, log, "--seed", "1", "--resume")

    run_id = latest_run_id(runs)
    summary = _summary(runs, run_id)
    assert code in (0, 1), log.read_text()[-3000:]
    assert summary["status"] == "completed"
    assert [t["id"] for t in summary["tasks"]] == [t.id for t in TASKS]
    assert _sql(runs, "SELECT count(*) FROM runs") == [(1,)]  # resumed, or begun once afresh


def _started(runs: Path, reached) -> bool:
    try:
        return reached(runs)
    except Exception:  # sqlite3 errors while the store is being created
        return False


def test_a_resume_killed_again_still_loses_nothing(night, tmp_path: Path) -> None:
    """kill -9, --resume, kill -9 again, --resume: each step keeps everything finished before."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    common = ("--seed", "9", "--concurrency", "2")
    run_id = _kill_9(tasks, runs, log, "attempt_finished", 2, *common)
    first = Snapshot.take(runs, run_id)
    already = count(runs / run_id, "attempt_finished")
    again = _kill_9(tasks, runs, log, "attempt_finished", already + 1, *common, "--resume")
    second = Snapshot.take(runs, run_id)

    code = _run(tasks, runs, log, *common, "--resume")

    final = Snapshot.take(runs, run_id)
    assert again == run_id and code in (0, 1)
    assert _summary(runs, run_id)["status"] == "completed"
    assert len(first.attempts) < len(second.attempts) <= len(final.attempts)
    _assert_kept(first, second)
    _assert_kept(second, final)
    assert _sql(runs, "SELECT resumes FROM runs WHERE run_id=?", run_id) == [(2,)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sigterm_and_sigint_stop_record_summarise_and_exit_130(night, tmp_path, sig) -> None:
    """A stop signal ends new calls, keeps what finished, writes the summary and exits 130."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    proc = _start(tasks, runs, "--seed", "4", "--concurrency", "1", log=log)
    try:
        _stop_at(proc, tasks, runs, "attempt_finished", 2)
        kill_tree(proc, sig)  # like Ctrl-C: the signal goes to the whole foreground group
        code = proc.wait(WAIT_S)
    finally:
        kill_tree(proc)

    run_id = latest_run_id(runs)
    summary, logged = _summary(runs, run_id), events(runs / run_id)
    stop_at = next(i for i, e in enumerate(logged) if e["event"] == "stop_requested")
    finished = {(e["task_id"], e["n"]) for e in logged if e["event"] == "attempt_finished"}
    in_summary = {(t["id"], a["n"]) for t in summary["tasks"] for a in t["attempts"]}
    assert code == 130, log.read_text()[-3000:]
    assert summary["status"] == "interrupted"
    assert _sql(runs, "SELECT status FROM runs WHERE run_id=?", run_id) == [("interrupted",)]
    assert [t["id"] for t in summary["tasks"]] == [t.id for t in TASKS]
    assert finished <= set(Snapshot.take(runs, run_id).attempts) and finished <= in_summary
    # At concurrency 1 at most the one call already under way may finish after the signal.
    assert sum(1 for e in logged[stop_at:] if e["event"] == "call_finished") <= 1
    assert any(t["status"] == "skipped" and t["reason"] == "interrupted" for t in summary["tasks"])
    assert logged[-1]["event"] == "run_finished"
    _outputs_whole(tasks)


def test_an_interrupted_run_resumes_by_id_to_completion_without_rebuying(night, tmp_path) -> None:
    """After SIGTERM, --resume RUN_ID finishes that run; what was bought before is kept."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    proc = _start(tasks, runs, "--seed", "4", "--concurrency", "1", log=log)
    try:
        _stop_at(proc, tasks, runs, "attempt_finished", 2)
        kill_tree(proc, signal.SIGTERM)
        assert proc.wait(WAIT_S) == 130
    finally:
        kill_tree(proc)
    run_id = latest_run_id(runs)
    before = Snapshot.take(runs, run_id)

    code = _run(tasks, runs, log, "--seed", "4", "--concurrency", "2", "--resume", run_id)

    summary = _summary(runs, run_id)
    assert code in (0, 1)
    assert summary["status"] == "completed"
    assert all(t["status"] != "skipped" for t in summary["tasks"])
    _assert_kept(before, Snapshot.take(runs, run_id))


CAP = "0.34"  # room for one worst-case mid-tier call and a few real ones: the run must stop


@pytest.mark.parametrize(
    "restate_cap",
    [True, False],
    ids=["cap-restated", "cap-not-restated"],
)
def test_resumed_run_keeps_its_budget_cap(night, tmp_path: Path, restate_cap: bool) -> None:
    """A run killed and resumed spends no more in total than the cap it was started with."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    common = ("--seed", "3", "--concurrency", "1")
    run_id = _kill_9(tasks, runs, log, "call_finished", 1, *common, "--budget-usd", CAP)

    code = _run(tasks, runs, log, *common, "--resume", *(("--budget-usd", CAP) * restate_cap))

    summary = _summary(runs, run_id)
    assert summary["budget"]["cap_usd"] == float(CAP)
    assert Snapshot.take(runs, run_id).spent <= Decimal(CAP)
    assert (code, summary["status"]) == (3, "budget_stopped")


def test_resumed_run_keeps_its_task_selection(night, tmp_path: Path) -> None:
    """A run started with --only, killed and resumed, still covers only the tasks it selected."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    common = ("--seed", "3", "--concurrency", "1")
    run_id = _kill_9(tasks, runs, log, "call_finished", 1, *common, "--only", "alpha")

    code = _run(tasks, runs, log, *common, "--resume")

    assert code in (0, 1)
    summary = _summary(runs, run_id)
    ran = [t["id"] for t in summary["tasks"] if t["cause"] != "filtered"]
    assert ran == ["alpha"]
    assert all(t["status"] == "skipped" for t in summary["tasks"] if t["id"] != "alpha")


def test_next_night_after_a_crash_builds_on_the_killed_runs_work(night, tmp_path: Path) -> None:
    """Without --resume, the night after a kill -9 skips what passed and seeds the rest from
    the killed run's best attempts: nothing that was bought is lost."""
    tasks, runs = night
    log = tmp_path / "harness.log"
    killed = _kill_9(tasks, runs, log, "attempt_finished", 3, "--seed", "5", "--concurrency", "2")
    crashed = Snapshot.take(runs, killed)

    code = _run(tasks, runs, log, "--seed", "6", "--concurrency", "2")

    night2 = latest_run_id(runs)
    summary = {t["id"]: t for t in _summary(runs, night2)["tasks"]}
    seeded = {e["task_id"]: e for e in events(runs / night2) if e["event"] == "task_seeded"}
    carried = 0
    assert code in (0, 1) and night2 != killed
    for task in TASKS:
        best = crashed.best_passed(task.id)
        if crashed.tasks.get(task.id, ("",))[0] == "passed":
            assert summary[task.id]["cause"] == "up_to_date"
        elif best:
            assert (seeded[task.id]["from_run"], seeded[task.id]["passed"]) == (killed, best)
            assert summary[task.id]["passed"] >= best
            carried += 1
    assert carried or crashed.tasks, "the kill point should leave some work behind"
