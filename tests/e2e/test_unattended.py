"""Unattended nights end to end: the lock, the up-to-date skip, the ratchet across nights,
determinism under concurrency, and concurrency that really overlaps within its limits."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import harness.fsio as fsio
import harness.runner.wiring as wiring
import harness.sim as sim
import harness.testrun as testrun
from harness.cli import main
from harness.runner import LOCK_NAME
from tests._night import Task, db_rows, events, kill_tree, run_cli, start_cli, wait_for, write_tasks

pytestmark = pytest.mark.slow

WAIT_S = 120  # a hung run fails the test instead of hanging the suite; not a speed assertion


def _by_id(summary: dict) -> dict[str, dict]:
    return {t["id"]: t for t in summary["tasks"]}


def _tested(root: Path) -> set[str]:
    """Tasks whose candidates were tested in this run (a fresh attempt or a re-tested seed)."""
    return {e["task_id"] for e in events(root) if e["event"] == "tests_ran"}


def _started(root: Path) -> bool:
    return any(e["event"] == "task_started" for e in events(root))


# Lock.


# Tests of the interactive pool (its limits, its first call, its lock's still run dir) buy
# every call at once: the shipped batch rounds are tested in tests/runner/test_batch_rounds.py.
INTERACTIVE = "batch: {enabled: false}\n"


def _interactive(tmp_path: Path) -> tuple[str, str]:
    config = tmp_path / "interactive.yaml"
    config.write_text(INTERACTIVE)
    return "--config", str(config)


def test_second_run_on_a_held_run_dir_exits_75_naming_the_holder_then_takes_over(tmp_path) -> None:
    """While a run holds the run dir a second one exits 75 at once, doing nothing and naming
    the holder's pid and start time; once the holder is SIGKILLed the next run takes over."""
    slow = Task("slow", solved=True, slow_s=25)
    tasks = write_tasks(tmp_path / "tasks", [slow, Task("quick", solved=True)])
    runs, lock = tmp_path / "runs", tmp_path / "runs" / LOCK_NAME
    config = _interactive(tmp_path)  # the run dir's listing stays still while the holder runs
    holder = start_cli(tasks, runs, "--only", "slow", *config, log=tmp_path / "holder.log")
    try:
        wait_for(
            lambda: lock.exists() and f'"pid": {holder.pid}' in lock.read_text(), WAIT_S, holder
        )
        started_at = json.loads(lock.read_text())["started_at"]
        wait_for(lambda: _started(runs / "latest"), WAIT_S, holder)
        state = lambda: (sorted(runs.iterdir()), db_rows(runs / "harness.db", "SELECT * FROM runs"))  # noqa: E731
        before = state()

        second = subprocess.run(
            [sys.executable, "-m", "harness", "run", str(tasks), "--provider", "sim",
             "--run-dir", str(runs), *config],
            capture_output=True, text=True, timeout=WAIT_S,
        )  # fmt: skip

        assert holder.poll() is None  # it did not queue behind the holder
        assert second.returncode == 75
        assert f"pid {holder.pid}" in second.stderr and f"started {started_at}" in second.stderr
        assert dt.datetime.fromisoformat(started_at).tzinfo is not None
        assert state() == before
        holder.kill()  # the harness alone: its sandboxed test may outlive it for a moment
        holder.wait()

        code, summary, _ = run_cli(tasks, runs, "--only", "quick", *config)
    finally:
        kill_tree(holder)

    assert code == 0
    assert (summary["status"], [t["status"] for t in summary["tasks"]][:1]) == (
        "completed",
        ["passed"],
    )


# Across nights: the up-to-date skip.


@pytest.fixture
def solved(tmp_path: Path) -> Path:
    """Two tasks that pass at attempt 1 (the simulator answers with their correct reference)."""
    return write_tasks(tmp_path / "tasks", [Task("one", solved=True), Task("two", solved=True)])


def test_passed_task_is_skipped_as_up_to_date_with_exit_0(solved: Path, tmp_path: Path) -> None:
    """A second night on unchanged inputs skips every passed task, spends nothing, exits 0."""
    runs = tmp_path / "runs"
    first_code, first, _ = run_cli(solved, runs, "--seed", "1")
    shipped = {t["id"]: Path(t["output"]).read_text() for t in first["tasks"]}

    code, second, root = run_cli(solved, runs, "--seed", "2")

    assert (first_code, [t["status"] for t in first["tasks"]]) == (0, ["passed", "passed"])
    assert code == 0
    for task in second["tasks"]:
        assert task["status"] == "skipped"
        assert task["cause"] == "up_to_date" and first["run_id"] in task["reason"]
        assert (task["attempts"], task["cost_usd"]) == ([], 0)
        assert Path(task["output"]).read_text() == shipped[task["id"]]
    assert second["budget"]["spent_usd"] == 0
    calls = db_rows(
        runs / "harness.db", "SELECT count(*) FROM calls WHERE run_id=?", (second["run_id"],)
    )
    assert calls == [(0,)]
    assert not _started(root)


def _append(path: Path, text: str) -> None:
    with open(path, "a") as f:
        f.write(text)


CHANGES = {  # what changed → the tasks that must run again (the support file is shared)
    "test": (("acceptance/test_one.py", "\n\ndef test_later():\n    assert clamp(3, 0, 1) == 1\n"),
             {"one"}),
    "reference": (("legacy/one.py", "\n# legacy: keep the rounding of discount()\n"), {"one"}),
    "support": (("conftest.py", "\n\n@pytest.fixture\ndef eleven():\n    return 11\n"),
                {"one", "two"}),
    "output deleted": ((None, None), {"one"}),
}  # fmt: skip


@pytest.mark.parametrize("change", list(CHANGES))
def test_changed_input_makes_a_passed_task_run_again(solved: Path, tmp_path, change) -> None:
    """Changing a task's tests, reference or support (or losing its output) reruns just it."""
    runs = tmp_path / "runs"
    run_cli(solved, runs, "--seed", "1")
    (path, text), rerun = CHANGES[change]
    if path is None:
        (solved.parent / "out" / "one_service.py").unlink()
    else:
        _append(solved.parent / path, text)

    code, summary, root = run_cli(solved, runs, "--seed", "1")

    assert _tested(root) == rerun
    for task in summary["tasks"]:
        assert (task["cause"] == "up_to_date") == (task["id"] not in rerun)
    assert code == 0 and all(_by_id(summary)[i]["status"] == "passed" for i in rerun)


def test_changed_prompt_template_or_route_makes_a_passed_task_run_again(
    solved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A passed task runs again when its prompt templates or its routes change."""
    prompts = tmp_path / "prompts"
    shutil.copytree(wiring.default_prompts_dir(), prompts)
    monkeypatch.setattr(wiring, "default_prompts_dir", lambda: prompts)
    runs = tmp_path / "runs"
    run_cli(solved, runs, "--seed", "1")
    _append(prompts / "service_port" / "fix.md", "\nKeep every public name.\n")

    _, after_prompt, prompt_root = run_cli(solved, runs, "--seed", "1")
    _, unchanged, _ = run_cli(solved, runs, "--seed", "1")
    config = tmp_path / "harness.yaml"
    config.write_text(
        "routes:\n  mid: {provider: anthropic, model: claude-sonnet-5-5, max_tokens: 30000}\n"
    )
    _, after_route, route_root = run_cli(solved, runs, "--seed", "1", "--config", str(config))

    assert _tested(prompt_root) == _tested(route_root) == {"one", "two"}
    assert [t["status"] for t in after_prompt["tasks"] + after_route["tasks"]] == ["passed"] * 4
    assert [t["status"] for t in unchanged["tasks"]] == ["skipped", "skipped"]


def test_rerun_forces_a_passed_task_to_run_again(solved: Path, tmp_path: Path) -> None:
    """--rerun runs up-to-date tasks anyway, as a fresh port (a new write, not the old code)."""
    runs = tmp_path / "runs"
    run_cli(solved, runs, "--seed", "1")

    code, summary, root = run_cli(solved, runs, "--seed", "1", "--rerun")

    assert code == 0
    assert _tested(root) == {"one", "two"}
    assert [(t["status"], t["reason"]) for t in summary["tasks"]] == [("passed", "")] * 2
    assert [t["attempts"][0]["kind"] for t in summary["tasks"]] == ["write", "write"]


WRONG = "def clamp(x, lo, hi):\n    return x\n"


def test_a_replaced_output_is_not_up_to_date(solved: Path, tmp_path: Path) -> None:
    """If the file at a passed task's output is no longer the code that passed, the task runs
    again instead of being reported up to date (exit 0 must mean the shipped files pass)."""
    runs = tmp_path / "runs"
    run_cli(solved, runs, "--seed", "1")
    output = solved.parent / "out" / "one_service.py"
    output.write_text(WRONG)  # e.g. an older version checked out over it

    code, summary, root = run_cli(solved, runs, "--seed", "1")

    assert "one" in _tested(root)
    assert not _by_id(summary)["one"]["reason"].startswith("up to date")
    assert code == 0 and output.read_text() != WRONG


# Across nights: the ratchet.


def test_a_task_that_did_not_pass_starts_the_next_night_from_its_best(tmp_path: Path) -> None:
    """Night 2 seeds an unfinished task with night 1's best code, opens with a fix from it,
    and never ships fewer passing tests than night 1's best."""
    tasks = write_tasks(tmp_path / "tasks", [Task(f"t{i}", max_attempts=2) for i in range(4)])
    runs = tmp_path / "runs"
    _, night1, _ = run_cli(tasks, runs, "--seed", "11", "--concurrency", "4")
    best1 = {t["id"]: Path(t["output"]).read_text() for t in night1["tasks"] if t["output"]}
    unfinished = [t for t in night1["tasks"] if t["status"] != "passed" and t["output"]]
    assert unfinished, "seed 11 should leave some task unfinished after night 1"

    _, night2, root = run_cli(tasks, runs, "--seed", "12", "--concurrency", "4")

    seeded = {e["task_id"]: e for e in events(root) if e["event"] == "task_seeded"}
    tasks2 = _by_id(night2)
    for task in unfinished:
        again, seed = tasks2[task["id"]], seeded[task["id"]]
        assert (seed["from_run"], seed["passed"]) == (night1["run_id"], task["passed"])
        assert again["seed"] == again["seed"] | {
            "source": "earlier_run",
            "run_id": seed["from_run"],
        }
        assert again["attempts"][0]["kind"] == "fix"
        prompt = (root / "calls" / task["id"] / "1-fix.prompt.md").read_text()
        assert best1[task["id"]].strip() in prompt
        assert again["passed"] >= task["passed"]
        assert again["passed"] == max([task["passed"]] + [a["passed"] for a in again["attempts"]])
    for task in night1["tasks"]:
        if task["status"] == "passed":
            assert tasks2[task["id"]]["reason"].startswith("up to date")


# Concurrency.


def _shape(summary: dict) -> list:
    keys = ("n", "kind", "passed", "failed", "errors", "extraction_error", "regressed", "cost_usd")
    return [
        (t["id"], t["status"], t["reason"], t["best_attempt"], t["passed"], t["cost_usd"],
         [tuple(a[k] for k in keys) for a in t["attempts"]])
        for t in summary["tasks"]
    ]  # fmt: skip


def test_results_are_identical_at_concurrency_1_and_8(tmp_path: Path) -> None:
    """Same seed, same night: statuses, pass counts, extraction errors and costs per attempt."""
    many = [Task(f"t{i}") for i in range(4)] + [Task("done", solved=True)]
    one = write_tasks(tmp_path / "c1", many)
    eight = write_tasks(tmp_path / "c8", many)

    _, serial, _ = run_cli(one, tmp_path / "runs1", "--seed", "8", "--concurrency", "1")
    _, parallel, _ = run_cli(eight, tmp_path / "runs8", "--seed", "8", "--concurrency", "8")

    assert sum(len(t["attempts"]) for t in serial["tasks"]) > len(many)  # some needed fixes
    assert _shape(serial) == _shape(parallel)
    assert serial["budget"]["spent_usd"] == parallel["budget"]["spent_usd"]


class _InFlight:
    """Counts how many calls of one kind run at once, and the most ever seen."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self._lock = threading.Lock()

    def wrap(self, fn):
        def wrapped(*args, **kwargs):
            with self._lock:
                self.now += 1
                self.most = max(self.most, self.now)
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.now -= 1

        return wrapped


@pytest.fixture
def slow_sim(monkeypatch: pytest.MonkeyPatch) -> tuple[_InFlight, _InFlight]:
    """The simulator at 0.2 s per call, and in-flight counters for its calls and test runs."""
    calls, tests = _InFlight(), _InFlight()
    slow = sim.SimLatency(base_s=0.2, per_1k_output_tokens_s=0, jitter=0)

    class SlowSim(sim.SimProvider):
        def __init__(self, tasks, seed=0, latency=None):
            super().__init__(tasks, seed, slow)
            self.complete = calls.wrap(self.complete)

    monkeypatch.setattr(sim, "SimProvider", SlowSim)
    monkeypatch.setattr(testrun, "run_tests", tests.wrap(testrun.run_tests))
    return calls, tests


def _most_open(logged: list[dict]) -> int:
    """The most tasks between task_started and task_finished at once, in log order."""
    open_now = most = 0
    for event in logged:
        open_now += {"task_started": 1, "task_finished": -1}.get(event["event"], 0)
        most = max(most, open_now)
    return most


def _times(logged: list[dict], event: str) -> list[dt.datetime]:
    return [dt.datetime.fromisoformat(e["timestamp"]) for e in logged if e["event"] == event]


def test_tasks_overlap_and_each_provider_keeps_its_own_limit(slow_sim, tmp_path: Path) -> None:
    """At --concurrency 6 all six tasks are under way together, yet never more than the
    configured 2 sim calls (nor more test runs than CPUs) are in flight."""
    calls, tests = slow_sim
    tasks = write_tasks(tmp_path / "tasks", [Task(f"s{i}", solved=True) for i in range(6)])
    config = tmp_path / "harness.yaml"
    config.write_text("concurrency:\n  providers: {sim: 2}\n" + INTERACTIVE)

    code, _, root = run_cli(tasks, tmp_path / "runs", "--concurrency", "6", "--config", str(config))

    logged = events(root)
    started, finished = _times(logged, "task_started"), _times(logged, "task_finished")
    assert code == 0 and len(started) == len(finished) == 6
    assert max(started) < min(finished)  # every task's interval holds the last start
    assert _most_open(logged) == 6
    assert calls.most == 2
    assert 1 <= tests.most <= (os.cpu_count() or 1)


def test_configured_task_concurrency_is_the_default(slow_sim, tmp_path: Path) -> None:
    """Without --concurrency, config concurrency.tasks bounds the tasks under way at once."""
    tasks = write_tasks(tmp_path / "tasks", [Task(f"s{i}", solved=True) for i in range(6)])
    config = tmp_path / "harness.yaml"
    config.write_text("concurrency:\n  tasks: 3\n" + INTERACTIVE)

    code, _, root = run_cli(tasks, tmp_path / "runs", "--config", str(config))

    assert code == 0
    assert _most_open(events(root)) == 3


# A disk that fills mid-night. The fault is injected at the write layer (fsio._write, which
# every run-folder file goes through) as the kernel reports it: OSError ENOSPC.


def _disk_full(monkeypatch: pytest.MonkeyPatch, refuses) -> None:
    """From the first write that `refuses(path)` names on, fsio writes fail as a full disk's
    do; `refuses` sees every path and whether the disk is full already."""
    real, full = fsio._write, []

    def write(path, text, verify, durable):
        if full or refuses(Path(path)):
            full.append(path)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, text, verify, durable)

    monkeypatch.setattr(fsio, "_write", write)


def test_a_night_whose_call_records_cannot_be_written_halts_with_its_cause_in_the_summary(
    tmp_path, monkeypatch
) -> None:
    """The run folder's copy of the first call fails (ENOSPC): no further call is made, the
    night ends `halted`, exit 4, and summary.json (still writable) says why."""
    tasks = write_tasks(tmp_path / "tasks", [Task(n) for n in "abc"])
    real = fsio._write

    def calls_refused(path, text, verify, durable):
        if "calls" in path.parts:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, text, verify, durable)

    monkeypatch.setattr(fsio, "_write", calls_refused)

    code, summary, root = run_cli(
        tasks, tmp_path / "runs", "--concurrency", "1", *_interactive(tmp_path)
    )

    notes = " ".join(summary["notes"])
    calls = db_rows(root.parent / "harness.db", "SELECT COUNT(*) FROM calls")[0][0]
    assert (code, summary["status"], calls) == (4, "halted", 1)
    assert "records could not be written" in notes and "No space left on device" in notes
    assert [t["cause"] for t in summary["tasks"]] == ["halted"] * 3


def test_a_disk_that_fills_mid_night_exits_4_with_one_line_and_no_traceback(
    tmp_path, monkeypatch, capsys
) -> None:
    """Every write fails from the first call's record on, the summary's too: exit 4, one
    `halted` line on stderr naming the cause, no traceback (none chained from closing)."""
    tasks = write_tasks(tmp_path / "tasks", [Task(n) for n in "abc"])
    _disk_full(monkeypatch, lambda path: "calls" in path.parts)
    runs = tmp_path / "runs"
    argv = ["run", str(tasks), "--provider", "sim", "--run-dir", str(runs), "--log-level", "error"]

    code = main([*argv, "--concurrency", "1"])

    err = capsys.readouterr().err
    halted = [line for line in err.splitlines() if "halted" in line]
    assert (code, "Traceback" in err, (runs / "latest" / "summary.json").exists()) == (
        4,
        False,
        False,
    ), err
    assert halted and all("No space left on device" in line for line in halted), err
