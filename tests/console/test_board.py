"""The live view: a recorded night's events folded into the board and drawn with rich; off a
terminal, one concise line per finished task; the view is fed by the logging it replaces."""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
import structlog
from rich.console import Console

from harness.cli import main
from harness.console import Board, LineView, LiveBoard, night_console, render_board
from harness.log import close_logging, configure_logging, console_view
from harness.results import money
from tests._night import Task, write_tasks


def _events(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]


def _drawn(board: Board, now: dt.datetime) -> str:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system=None, width=200)
    console.print(render_board(board.snapshot(), now))
    return out.getvalue()


def _fed(events: list[dict]) -> Board:
    board = Board()
    for event in events:
        board.feed(event)
    return board


def test_board_drawn_from_a_recorded_night_shows_its_summary_totals(example_nights) -> None:
    """Done of total, passing, failed and spend against the cap: the summary's numbers."""
    night = example_nights(2)
    summary = json.loads((night / "summary.json").read_text())
    board = _fed(_events(night))

    text = _drawn(board, dt.datetime.now(dt.UTC))

    statuses = [t["status"] for t in summary["tasks"]]
    failed = sum(s in ("failed", "partial", "error", "guardrail") for s in statuses)
    spent = money(Decimal(str(summary["budget"]["spent_usd"])))
    cap = money(Decimal(str(summary["budget"]["cap_usd"])))
    expected = (
        f"{len(statuses)}/{len(statuses)} done · {statuses.count('passed')} passing · "
        f"{failed} failed · {spent} of {cap}"
    )
    assert (expected in text, summary["status"] in text, summary["run_id"] in text) == (
        True,
        True,
        True,
    )


def test_board_mid_night_shows_each_running_task_with_its_attempt_step_and_passes(
    example_nights,
) -> None:
    """Cut the stream at the first finished task: every task started and not finished has
    a line with the attempt and step of its last call and its best passes so far."""
    events = _events(example_nights(2))
    cut = next(i for i, e in enumerate(events) if e["event"] == "task_finished")
    board = _fed(events[:cut])
    running = {e["task_id"] for e in events[:cut] if e["event"] == "task_started"}
    last_call = {e["task_id"]: e for e in events[:cut] if e["event"] == "call_finished"}

    text = _drawn(board, dt.datetime.now(dt.UTC))

    lines = {line.split()[0]: line for line in text.splitlines() if line.split()}
    for task in running:
        call = last_call[task]
        assert f"attempt {call['attempt']}" in lines[task], lines[task]
        assert call["step"] in lines[task] or "tests" in lines[task], lines[task]
    assert f"0/{len(running)} done" in text


def test_off_a_terminal_each_finished_task_is_one_line_and_warnings_still_show(
    example_nights,
) -> None:
    """Info level: a start line, a line per task_finished naming task and status, an end
    line; warnings as one line each; no call or test chatter."""
    events = _events(example_nights(2))
    out = io.StringIO()
    view = LineView(out, "info")

    for event in events:
        view(event)

    lines = out.getvalue().splitlines()
    finished = [e for e in events if e["event"] == "task_finished"]
    warnings = [e for e in events if e["level"] in ("warning", "error")]
    for event in finished:
        assert any(f"  {event['task_id']} {event['status']} " in line for line in lines)
    assert len(lines) == 2 + len(finished) + len(warnings)
    assert not any("call_finished" in line or "tests_ran" in line for line in lines)


def test_off_a_terminal_at_warning_level_only_warnings_and_errors_print(example_nights) -> None:
    """--log-level warning: the task lines are info, so only the warnings remain."""
    events = _events(example_nights(2))
    out = io.StringIO()
    view = LineView(out, "warning")

    for event in events:
        view(event)

    warnings = [e["event"] for e in events if e["level"] in ("warning", "error")]
    assert [line.split()[4] for line in out.getvalue().splitlines()] == warnings


def test_on_a_terminal_the_live_board_prints_warnings_above_its_last_frame(example_nights) -> None:
    """LiveBoard on a forced terminal: each warning once as a line, then the final board
    with the night's totals; no info event becomes a line."""
    events = _events(example_nights(2))
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system=None, width=200)

    with LiveBoard(out, "info", console=console) as view:
        for event in events:
            view(event)

    text = out.getvalue()
    warnings = [e for e in events if e["level"] in ("warning", "error")]
    finished = [e for e in events if e["event"] == "task_finished"]
    assert [text.count(f"  {e['event']}  ") >= 1 for e in warnings] == [True] * len(warnings)
    assert f"{len(finished)}/{len(finished)} done" in text.rsplit(warnings[-1]["event"], 1)[1]
    assert "call_finished" not in text


def test_a_console_view_gets_every_event_while_the_events_file_keeps_them_all(
    tmp_path: Path,
) -> None:
    """Under console_view, logged events reach the view (not stderr lines) and events.jsonl."""
    seen: list[str] = []
    saved = structlog.get_config()
    try:
        with console_view(lambda event: seen.append(event["event"])):
            stream = configure_logging(tmp_path / "events.jsonl")
            structlog.get_logger().debug("quiet_detail")
            structlog.get_logger().info("task_finished", task_id="t")
            close_logging(stream)
    finally:
        structlog.configure(**saved)

    written = [
        json.loads(x)["event"] for x in (tmp_path / "events.jsonl").read_text().split("\n")[:-1]
    ]
    assert (seen, written) == (["quiet_detail", "task_finished"], ["quiet_detail", "task_finished"])


def test_a_failing_view_never_reaches_the_code_that_logs(capsys) -> None:
    """A fault in the console view is reported once on stderr; logging goes on."""

    def broken(_event: dict) -> None:
        raise RuntimeError("view bug")

    saved = structlog.get_config()
    try:
        with console_view(broken):
            configure_logging(None)
            structlog.get_logger().info("one")
            structlog.get_logger().info("two")
    finally:
        structlog.configure(**saved)

    assert capsys.readouterr().err.count("console view failed") == 1


def test_debug_level_keeps_the_full_structlog_lines() -> None:
    """--log-level debug installs no view: the raw lines stay, as before the board."""
    with night_console("debug", io.StringIO()) as view:
        assert view is None


def test_harness_run_off_a_terminal_prints_a_line_per_finished_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`harness run` with stderr not a terminal: one line per task, none per call."""
    tasks = write_tasks(tmp_path / "tasks", [Task("alpha", solved=True), Task("beta", solved=True)])
    saved = structlog.get_config()
    try:
        code = main(["run", str(tasks), "--provider", "sim", "--run-dir", str(tmp_path / "runs")])
    finally:
        structlog.configure(**saved)

    err = capsys.readouterr().err.splitlines()
    assert code == 0
    assert sorted(line.split()[1] for line in err if " passed " in line) == ["alpha", "beta"]
    assert not any("call_finished" in line or "policy_loaded" in line for line in err)
