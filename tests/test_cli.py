"""The command line's own behaviour: a closed stdout is not an error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.report import write_summary
from tests._night import Task, write_tasks
from tests.report.test_md import summary

ROOT = Path(__file__).resolve().parent.parent


def test_summary_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """`harness summary RUN | head -1`: a reader that has gone away gets no traceback."""
    write_summary(tmp_path, summary())
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write is EPIPE
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "harness", "summary", str(tmp_path)],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    os.close(write)

    assert (done.returncode, done.stderr) == (0, "")


# Holds `harness run` inside its start-up checks (after writing a marker) until signalled.
HELD_START = """\
import pathlib, sys, time
import harness.runner as runner
def held(args):
    pathlib.Path(sys.argv[1]).write_text("in start-up")
    time.sleep(120)
runner.check_inputs = held
from harness.cli import main
sys.exit(main(["run", sys.argv[2], "--provider", "sim", "--run-dir", sys.argv[3]]))
"""


def test_sigterm_during_start_up_exits_130_as_documented(tmp_path: Path) -> None:
    """SIGTERM before the night's pool runs (start-up checks) exits 130, not 143."""
    from tests._night import Task, kill_tree, wait_for, write_tasks

    tasks = write_tasks(tmp_path / "tasks", [Task("calc")])
    marker = tmp_path / "marker"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-c", HELD_START, str(marker), str(tasks), str(tmp_path / "runs")]
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert wait_for(marker.exists, timeout_s=60, proc=proc)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    finally:
        kill_tree(proc)

    assert code == 130


def test_control_characters_reach_the_terminal_escaped_in_every_error(
    tmp_path: Path, capsys
) -> None:
    """A raw ESC in a path (a task list's folder) or a config key is shown as \\x1b, never
    sent raw to the terminal."""
    from harness.cli import main

    folder = tmp_path / "a\x1b[2Jb"
    folder.mkdir()
    (folder / "tasks.yaml").write_text(
        "tasks:\n  - id: t\n    reference: gone.py\n    tests: gone_test.py\n    output: o.py\n"
    )
    config = tmp_path / "harness.yaml"
    config.write_text("lo\x1b[31mop: {review: false}\n")
    args = ["--provider", "sim", "--run-dir", str(tmp_path / "runs")]

    codes = (
        main(["tasks", "validate", str(folder / "tasks.yaml")]),
        main(["run", str(folder / "tasks.yaml"), *args]),
        main(["run", str(folder / "tasks.yaml"), "--config", str(config), *args]),
    )

    err = capsys.readouterr().err
    assert (codes, "\x1b" in err, err.count("\\x1b") >= 3) == ((2, 2, 2), False, True)


def test_a_wrong_database_url_is_refused_without_its_password(tmp_path: Path, capsys) -> None:
    """`scale.database` that is no PostgreSQL URL: exit 2 naming the key, the password masked."""
    from harness.cli import main
    from tests._night import Task, write_tasks

    tasks = write_tasks(tmp_path / "tasks", [Task("calc")])
    config = tmp_path / "harness.yaml"
    config.write_text("scale: {database: 'mysql://night:hunter2-pw@db/harness'}\n")

    code = main(["run", str(tasks), "--provider", "sim", "--config", str(config)])

    err = capsys.readouterr().err
    assert (code, "scale" in err, "hunter2-pw" in err) == (2, True, False)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "{tasks}", "--provider", "sim", "--run-dir", "{runs}", "--config", "{config}"],
        ["worker", "--config", "{config}"],
        ["stop", "20261126-010000-ab12", "--config", "{config}"],
    ],
    ids=["run", "worker", "stop"],
)
def test_temporal_without_the_scale_extras_is_exit_2_saying_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv
) -> None:
    """`scale.engine: temporal` where temporalio is not installed: exit 2 naming the install
    command, no traceback, no run folder."""
    monkeypatch.setitem(sys.modules, "temporalio", None)  # as if not installed
    for name in [n for n in sys.modules if n.startswith("harness.scale")]:
        monkeypatch.delitem(sys.modules, name)
    tasks = write_tasks(tmp_path / "tasks", [Task("a", solved=True)])
    config = tmp_path / "cluster.yaml"
    config.write_text("scale: {engine: temporal}\n")
    runs = tmp_path / "runs"
    paths = {"tasks": tasks, "runs": runs, "config": config}

    code = main([a.format(**paths) for a in argv])

    err = capsys.readouterr().err
    assert (code, "pip install -e '.[scale]'" in err, "Traceback" in err) == (2, True, False)
    assert not runs.exists()
