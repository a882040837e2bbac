"""The command line's own behaviour: a closed stdout is not an error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from harness.report import write_summary
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
