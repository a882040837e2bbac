"""The command line's own behaviour: a closed stdout is not an error."""

from __future__ import annotations

import os
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
