"""The command line's own behaviour: a closed stdout is not an error."""

from __future__ import annotations

import os
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
