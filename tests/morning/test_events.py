"""`harness events`: a night's events filtered and aligned, and one attempt's artefacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.console import render_events
from harness.morning import EventFilter, follow_events, select_events
from harness.store import find_run


@pytest.fixture
def night(example_nights) -> Path:
    """The example on the simulator with seed 2: rate_limiter regresses at attempt 3 (reverted);
    inventory's review found violations, so its attempt 1 has a rewrite."""
    return example_nights(2)


def _task(night: Path, task_id: str) -> dict:
    summary = json.loads((night / "summary.json").read_text())
    return next(t for t in summary["tasks"] if t["id"] == task_id)


def events_out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["events", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_task_and_attempt_filter_keeps_that_attempts_events_only(night, capsys):
    """--task rate_limiter --attempt 3: its call, its test run (which names no attempt), the
    revert."""
    code, out, _ = events_out(capsys, str(night), "--task", "rate_limiter", "--attempt", "3")

    names = [line.split()[4] for line in out.splitlines()]
    assert code == 0
    # the fix went in a batch round: its call line (service_tier batch), then its reuse
    assert names == [
        "call_finished",
        "call_reused",
        "tests_ran",
        "attempt_reverted",
        "attempt_finished",
    ]
    assert all(" rate_limiter " in line and " #3 " in line for line in out.splitlines())


def test_lines_are_aligned_and_leave_out_null_fields(night, capsys):
    """Every event name starts in the same column; null and false fields are not printed."""
    _, out, _ = events_out(capsys, str(night), "--event", "attempt_*")

    lines = out.splitlines()
    starts = {line.index("attempt_") for line in lines}
    assert len(starts) == 1
    assert not any("=null" in line or "=false" in line for line in lines)


def test_event_glob_and_json_give_whole_events(night, capsys):
    """--event 'call_*' --json prints each matching event as the JSON it was recorded as."""
    _, out, _ = events_out(capsys, str(night), "--event", "call_*", "--json")

    events = [json.loads(line) for line in out.splitlines()]
    recorded = [e for e in find_run(night).events() if e["event"].startswith("call_")]
    assert recorded == events


def test_colour_only_when_asked():
    """ANSI colour codes appear only when rendering for a terminal."""
    rows = select_events(
        [{"event": "attempt_reverted", "level": "warning", "attempt": 2}], EventFilter()
    )

    plain, coloured = render_events(rows, colour=False), render_events(rows, colour=True)

    assert ("\033[" in plain[0], "\033[33m" in coloured[0]) == (False, True)


def test_show_code_defaults_to_the_best_attempt(night, capsys):
    """--show code without --attempt prints the best attempt's candidate, as shipped."""
    _, out, _ = events_out(capsys, str(night), "--task", "rate_limiter", "--show", "code")

    best = _task(night, "rate_limiter")["best_attempt"]
    assert (night / "attempts" / "rate_limiter" / f"{best}.py").read_text() == out


def test_show_tests_lists_each_case_of_a_regressed_attempt(night, capsys):
    """--show tests of the reverted attempt 3 gives its pass count and one line per test."""
    _, out, _ = events_out(
        capsys, str(night), "--task", "rate_limiter", "--attempt", "3", "--show", "tests"
    )

    third = _task(night, "rate_limiter")["attempts"][2]
    lines = out.splitlines()
    assert lines[0] == f"attempt 3: {third['passed']}/{third['total']} passed"
    assert sum(line.startswith("PASSED ") for line in lines) == third["passed"]
    outcomes = ("PASSED ", "FAILED ", "ERROR ", "SKIPPED ")
    assert sum(line.startswith(outcomes) for line in lines) == third["total"]


def test_show_prompt_of_one_step_or_every_step(night, capsys):
    """Attempt 1's prompts come with a header each; --step write gives that file alone."""
    _, every, _ = events_out(
        capsys, str(night), "--task", "inventory", "--attempt", "1", "--show", "prompt"
    )
    _, one, _ = events_out(
        capsys,
        str(night),
        "--task",
        "inventory",
        "--attempt",
        "1",
        "--show",
        "prompt",
        "--step",
        "write",
    )

    headers = [line for line in every.splitlines() if line.startswith("==> ")]
    assert headers == [
        f"==> calls/inventory/1-{s}.prompt.md <==" for s in ("write", "review", "rewrite")
    ]
    assert (night / "calls" / "inventory" / "1-write.prompt.md").read_text() == one


def test_a_run_id_is_found_under_run_dir(night, capsys):
    """A bare run id is looked up in --run-dir; a run dir alone means its latest run."""
    _, by_id, _ = events_out(capsys, night.name, "--run-dir", str(night.parent), "--event", "run_*")
    _, by_dir, _ = events_out(capsys, str(night.parent), "--event", "run_*")

    assert (2, by_id) == (len(by_id.splitlines()), by_dir)


def test_unknown_task_or_run_is_bad_input(night, capsys):
    """An unknown task or run exits 2 and says what exists."""
    task_code, _, task_err = events_out(capsys, str(night), "--task", "nope", "--show", "code")
    run_code, _, run_err = events_out(capsys, "no-such-run", "--run-dir", str(night.parent))

    assert (task_code, run_code) == (2, 2)
    assert "orders" in task_err
    assert "no run 'no-such-run'" in run_err


def test_candidate_file_finds_an_attempt_by_any_suffix(tmp_path):
    """A Go task's attempts are <n>.go; a rejected attempt is still its .rejected.txt."""
    from harness.store import RunFolder

    folder = tmp_path / "run" / "attempts" / "calc"
    folder.mkdir(parents=True)
    (folder / "1.rejected.txt").write_text("no go code block found\n")
    (folder / "2.go").write_text("package calc\n")
    run = RunFolder(tmp_path / "run")

    assert [run.candidate_file("calc", n) for n in (1, 2, 3)] == [
        folder / "1.rejected.txt",
        folder / "2.go",
        None,
    ]


@pytest.mark.parametrize(
    ("argv", "listed"),
    [
        (("--task", "typo"), "tasks: "),
        (("--task", "rate_limiter", "--attempt", "-1"), "attempts: 1, 2"),
        (("--event", "[x"), "unbalanced"),
        (("--event", "no_such_*"), "events: "),
    ],
    ids=["unknown-task", "unknown-attempt", "malformed-pattern", "no-match"],
)
def test_a_filter_that_names_nothing_is_exit_2_listing_what_exists(night, capsys, argv, listed):
    """A typo in --task, --attempt or --event is exit 2 saying what the run has, not silence."""
    code, out, err = events_out(capsys, str(night), *argv)

    assert (code, out, listed in err) == (2, "", True), err


def _line(name: str, **fields: object) -> bytes:
    return (json.dumps({"event": name, **fields}) + "\n").encode()


def _writer(path: Path, pieces: list[bytes]):
    """An `ended` callback that writes the next piece each time the follower finds nothing
    new (and says the night still runs): appends happen exactly while it is following; once
    every piece is written, the night has ended."""
    left = list(pieces)

    def ended() -> bool:
        if not left:
            return True
        with open(path, "ab") as out:
            out.write(left.pop(0))
        return False

    return ended


def test_follow_yields_events_appended_while_following_and_waits_for_a_cut_line(
    tmp_path: Path,
) -> None:
    """A line written in two pieces is yielded once, whole; following ends at run_finished."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line("run_started"))
    whole = _line("task_finished", task_id="a")
    pieces = [whole[:9], whole[9:] + _line("tests_ran", task_id="b"), _line("run_finished")]

    seen = [e["event"] for e in follow_events(path, _writer(path, pieces), poll_s=0)]

    assert seen == ["run_started", "task_finished", "tests_ran", "run_finished"]


def test_follow_reads_past_an_earlier_sessions_end_to_the_resumed_nights_end(
    tmp_path: Path,
) -> None:
    """An interrupted session's run_finished is followed by its resume: keep following."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line("run_started") + _line("run_finished") + _line("run_started"))

    seen = [e["event"] for e in follow_events(path, _writer(path, [_line("run_finished")]), 0)]

    assert seen == ["run_started", "run_finished", "run_started", "run_finished"]


def test_follow_of_a_resumed_night_follows_it_past_the_earlier_sessions_end(
    tmp_path: Path,
) -> None:
    """The file ends at an earlier session's run_finished while a resume already runs (it
    has not written its run_started yet): following waits for the resumed night's end."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line("run_started") + _line("run_finished"))
    resumed = [_line("run_started") + _line("task_finished", task_id="a"), _line("run_finished")]

    seen = [e["event"] for e in follow_events(path, _writer(path, resumed), 0)]

    assert seen == ["run_started", "run_finished", "run_started", "task_finished", "run_finished"]


def test_follow_of_a_killed_night_ends_once_what_it_wrote_is_read(tmp_path: Path) -> None:
    """No run_finished and no night writing: everything written is yielded, then the end."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line("run_started") + _line("task_started", task_id="a") + b'{"eve')

    seen = [e["event"] for e in follow_events(path, lambda: True, poll_s=0)]

    assert seen == ["run_started", "task_started"]


def test_follow_of_a_finished_night_prints_the_filtered_events_and_exits_0(night, capsys):
    """--follow on a night that has ended is the plain listing with its filters: no wait."""
    code, out, _ = events_out(capsys, str(night), "--follow", "--event", "task_finished")

    finished = [e for e in find_run(night).events() if e["event"] == "task_finished"]
    assert (code, [line.split()[2] for line in out.splitlines()]) == (
        0,
        [e["task_id"] for e in finished],
    )


def test_follow_with_a_filter_that_matches_nothing_is_bad_input(night, capsys):
    """A --task the run never had is exit 2 naming the tasks, as without --follow."""
    code, out, err = events_out(capsys, str(night), "--follow", "--task", "nope")

    assert (code, out, "tasks: " in err) == (2, "", True)


def test_show_tools_of_a_night_without_context_tools_is_exit_2(night, capsys):
    """--show tools on an attempt that made no tool call says so (exit 2), never a blank."""
    code, out, err = events_out(
        capsys, str(night), "--task", "orders", "--attempt", "1", "--show", "tools"
    )

    assert (code, out) == (2, "")
    assert "made no context tool call" in err
