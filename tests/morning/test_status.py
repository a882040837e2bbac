"""`harness status` and `harness stop` on a real night in another process: progress read from
the store while it runs, `--watch` and `events --follow` to its end, and a stop that ends it
as SIGTERM does (exit 130, a summary)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from decimal import Decimal
from pathlib import Path

import pytest

from harness.cli import main
from harness.results import usd
from tests._night import Task, count, events, kill_tree, start_cli, wait_for, write_tasks
from tests.conftest import EXAMPLE


def _status(capsys: pytest.CaptureFixture[str], runs: Path) -> dict:
    assert main(["status", str(runs), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _finished_tasks(runs: Path) -> int:
    events = runs / "latest" / "events.jsonl"
    if not events.is_file():
        return 0
    return events.read_text().count('"event": "task_finished"')


def test_status_of_a_running_night_then_stop_ends_it_with_130_and_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """While it runs: state running, tasks done so far; `harness stop` sends SIGTERM, the
    night exits 130 with an `interrupted` summary, and status then agrees with that summary."""
    shutil.copytree(EXAMPLE, tmp_path / "example", ignore=shutil.ignore_patterns("out"))
    runs = tmp_path / "runs"
    tasks = tmp_path / "example" / "tasks.yaml"
    proc = start_cli(tasks, runs, "--seed", "2", "--concurrency", "1", log=tmp_path / "log")
    try:
        assert wait_for(lambda: _finished_tasks(runs) >= 1, timeout_s=300, proc=proc)
        running = _status(capsys, runs)

        stopped = main(["stop", str(runs)])

        code = proc.wait(timeout=300)
        said = capsys.readouterr().out
    finally:
        kill_tree(proc)
    summary = json.loads((runs / "latest" / "summary.json").read_text())
    final = _status(capsys, runs)
    assert (running["state"], running["tasks_done"] >= 1) == ("running", True)
    assert (stopped, code, summary["status"]) == (0, 130, "interrupted")
    assert "finished (interrupted)" in said
    assert (final["state"], final["status"], final["tasks_total"]) == (
        "finished",
        "interrupted",
        len(summary["tasks"]),
    )
    assert usd(Decimal(final["spent_usd"])) == summary["budget"]["spent_usd"]
    done = [t for t in summary["tasks"] if t["status"] != "skipped"]
    assert final["tasks_done"] >= len([t for t in done if t["status"] == "passed"])
    assert final["tasks_passing"] == len([t for t in done if t["status"] == "passed"])


def test_stop_refuses_clearly_when_nothing_runs(example_nights, capsys) -> None:
    """A finished night: exit 2 saying so, no signal sent anywhere."""
    night = example_nights(2)

    code = main(["stop", str(night)])

    assert (code, "nothing to stop" in capsys.readouterr().err) == (2, True)


def test_status_of_a_finished_night_agrees_with_its_summary(example_nights, capsys) -> None:
    """tasks done and passing, spend and cap: the same numbers as summary.json."""
    night = example_nights(2)
    summary = json.loads((night / "summary.json").read_text())

    view = _status(capsys, night)

    passed = sum(t["status"] == "passed" for t in summary["tasks"])
    assert (view["state"], view["tasks_done"], view["tasks_passing"]) == (
        "finished",
        len(summary["tasks"]),
        passed,
    )
    assert usd(Decimal(view["spent_usd"])) == summary["budget"]["spent_usd"]


def test_watch_and_follow_track_a_night_in_another_process_to_its_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Started while the night runs: `status --watch --json` prints an object per change and
    exits 0 at the end, its last agreeing with summary.json; `events --follow --json` (in a
    thread beside it) sees the events written after it started and ends with run_finished."""
    tasks = write_tasks(tmp_path / "tasks", [Task(n, solved=True, slow_s=2) for n in "abc"])
    runs = tmp_path / "runs"
    proc = start_cli(tasks, runs, "--concurrency", "1", log=tmp_path / "log")
    try:
        assert wait_for(lambda: count(runs / "latest", "run_started") == 1, 300, proc)
        before = len(events(runs / "latest"))
        followed: list[int] = []
        follower = threading.Thread(
            target=lambda: followed.append(main(["events", str(runs), "--follow", "--json"]))
        )
        follower.start()
        watched = main(["status", str(runs), "--watch", "--json"])
        follower.join(timeout=300)
        code = proc.wait(timeout=300)
    finally:
        kill_tree(proc)
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    views = [o for o in out if "state" in o]
    seen = [o for o in out if "event" in o]
    summary = json.loads((runs / "latest" / "summary.json").read_text())
    last = views[-1]
    assert (code, watched, followed) == (0, 0, [0])
    assert (views[0]["state"], last["state"], last["status"]) == (
        "running",
        "finished",
        "completed",
    )
    assert (last["tasks_done"], last["tasks_passing"], last["tasks_failed"]) == (3, 3, 0)
    assert usd(Decimal(last["spent_usd"])) == summary["budget"]["spent_usd"]
    assert len({json.dumps(v) for v in views}) == len(views)  # a line per change, no repeats
    assert (seen == events(runs / "latest"), len(seen) > before) == (True, True)
    assert seen[-1]["event"] == "run_finished"


def test_status_and_events_leave_the_store_file_as_it_was(example_nights, capsys) -> None:
    """The morning commands open the store read only: its bytes and mtime do not change."""
    night = example_nights(2)
    db = night.parent / "harness.db"
    before = (db.stat().st_mtime_ns, db.read_bytes())

    codes = (
        main(["status", str(night), "--json"]),
        main(["status", str(night), "--watch"]),
        main(["events", str(night), "--show", "tests", "--task", "orders"]),
    )

    assert (codes, (db.stat().st_mtime_ns, db.read_bytes())) == ((0, 0, 0), before)


def test_status_shows_a_call_in_flight_as_held_not_as_spent(
    example_nights, tmp_path: Path, capsys
) -> None:
    """A call still out is held at its reservation, shown apart from the spend: spent stays
    what the finished calls cost (the board's number), held is the reservation."""
    from harness.llm import CallRequest, Prompt, Route
    from harness.store import Store

    runs = tmp_path / "runs"
    shutil.copytree(example_nights(2).parent, runs, symlinks=True)
    summary = json.loads((runs / "latest" / "summary.json").read_text())
    store = Store.open(runs / "harness.db")
    request = CallRequest(
        Route("mid", "sim", "sim-mid", 1000), Prompt("s", "a", "b"), "x", "fix", 9
    )
    store.open_call(summary["run_id"], request, Decimal("2.5"))
    store.close()
    capsys.readouterr()  # the night's own output, when the fixture ran it just now

    view = _status(capsys, runs)
    main(["status", str(runs)])
    line = capsys.readouterr().out

    assert (usd(Decimal(view["spent_usd"])), view["held_usd"]) == (
        summary["budget"]["spent_usd"],
        "2.5",
    )
    assert "$2.50 held" in line


def test_a_stale_lock_whose_pid_was_reused_is_neither_signalled_nor_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A night killed with SIGKILL leaves its lock file; once its pid belongs to an unrelated
    process, `stop` refuses (exit 2, no signal sent) and `status` says the night stopped."""
    tasks = write_tasks(tmp_path / "tasks", [Task("a", solved=True, slow_s=60)])
    runs = tmp_path / "runs"
    proc = start_cli(tasks, runs, log=tmp_path / "log")
    try:
        assert wait_for(lambda: count(runs / "latest", "run_started") == 1, 300, proc)
    finally:
        kill_tree(proc)
        proc.wait()
    lock = runs / ".harness.lock"
    stale = json.loads(lock.read_text())
    unrelated = subprocess.Popen(["sleep", "600"])
    try:
        lock.write_text(json.dumps({**stale, "pid": unrelated.pid}) + "\n")

        stopped = main(["stop", str(runs), "--wait", "0"])
        said = capsys.readouterr().err
        view = _status(capsys, runs)
        alive = unrelated.poll() is None
    finally:
        unrelated.kill()
        unrelated.wait()
    assert (stopped, "is not running" in said, alive) == (2, True, True), said
    assert view["state"] == "stopped"
