"""The shipped operations files (contrib/): the systemd unit and timer pass systemd's own check,
the unit's stop-by-morning setting is one that works on Type=oneshot, and the cron line runs
as written in a fresh directory, where `timeout` really ends an overlong night with a summary."""

from __future__ import annotations

import configparser
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests._night import Task, kill_tree, wait_for, write_tasks
from tests.conftest import EXAMPLE

CONTRIB = Path(__file__).resolve().parent.parent / "contrib"
SRV = "/srv/porting"


def _cron_command() -> str:
    """The command of the one schedule line in contrib/harness.cron (after its 5 time fields)."""
    lines = [
        line
        for line in (CONTRIB / "harness.cron").read_text().splitlines()
        if line.strip() and not line.startswith("#") and "=" not in line.split()[0]
    ]
    assert len(lines) == 1, lines
    return lines[0].split(None, 5)[5]


def _service() -> configparser.RawConfigParser:
    unit = configparser.RawConfigParser(strict=False)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string((CONTRIB / "harness.service").read_text().replace("\\\n", " "))
    return unit


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not here")
def test_systemd_analyze_verify_accepts_the_unit_and_the_timer() -> None:
    """`systemd-analyze verify` reports nothing for harness.service and harness.timer."""
    files = [str(CONTRIB / "harness.service"), str(CONTRIB / "harness.timer")]

    done = subprocess.run(["systemd-analyze", "verify", *files], capture_output=True, text=True)

    if "Failed to" in done.stderr and "harness" not in done.stderr:  # no manager in a container
        pytest.skip(f"systemd-analyze cannot run here: {done.stderr.strip()}")
    assert (done.returncode, done.stderr) == (0, "")


def test_the_unit_stops_by_morning_with_a_setting_oneshot_honours() -> None:
    """Type=oneshot ignores RuntimeMaxSec=: the night is bounded by `timeout --signal=TERM`
    (exit 130 with a summary) and a TimeoutStartSec= backstop, and only exit 1 counts as fine."""
    service = _service()["Service"]

    found = (
        service["Type"],
        "RuntimeMaxSec" in service,
        service["ExecStart"].split()[:3],
        "--preserve-status" in service["ExecStart"],
        "TimeoutStartSec" in service,
        service["SuccessExitStatus"],
    )

    assert found == ("oneshot", False, ["/usr/bin/timeout", "--signal=TERM", "--kill-after=10min"],
                     True, True, "1")  # fmt: skip


def _fresh(tmp_path: Path) -> Path:
    """A fresh porting directory as the cron line expects it: no runs/ yet, an env file, the
    example as tasks/nightly.yaml, and .venv/bin/harness running this harness on the simulator."""
    home = tmp_path / "porting"
    shutil.copytree(EXAMPLE, home / "tasks", ignore=shutil.ignore_patterns("out"))
    shutil.copy(home / "tasks" / "tasks.yaml", home / "tasks" / "nightly.yaml")
    (home / "harness.env").write_text("HARNESS_EXAMPLE=1\n")
    wrapper = home / ".venv" / "bin" / "harness"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(
        f'#!/bin/sh\nexec {sys.executable} -m harness "$@" --provider sim --seed 2 '
        "--log-level warning\n"
    )
    wrapper.chmod(0o755)
    return home


def _cron(home: Path, command: str) -> int:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(["/bin/sh", "-c", command], cwd=home, env=env).returncode


@pytest.mark.skipif(shutil.which("timeout") is None, reason="coreutils timeout not installed")
def test_the_cron_line_runs_a_night_in_a_fresh_directory(tmp_path: Path) -> None:
    """Run as written (paths moved to a temp dir): runs/ is made before the log opens, the
    night runs, and the log holds its summary."""
    home = _fresh(tmp_path)

    code = _cron(home, _cron_command().replace(SRV, str(home)))

    summary = json.loads((home / "runs" / "latest" / "summary.json").read_text())
    assert (code in (0, 1), summary["status"]) == (True, "completed")
    assert "# Run " in (home / "runs" / "cron.log").read_text()


@pytest.mark.skipif(shutil.which("timeout") is None, reason="coreutils timeout not installed")
def test_the_cron_lines_stop_by_morning_ends_an_overlong_night_with_a_summary(
    tmp_path: Path,
) -> None:
    """The line exactly as shipped (6 h): once the night runs, `timeout` is made to expire
    (SIGALRM is its own timer's signal) and ends the night by SIGTERM: exit 130 and an
    `interrupted` summary, not a kill. No clock decides the outcome."""
    home = _fresh(tmp_path)
    write_tasks(home / "tasks", [Task("long", solved=True, slow_s=3600)])
    shutil.copy(home / "tasks" / "tasks.yaml", home / "tasks" / "nightly.yaml")
    command = _cron_command().replace(SRV, str(home))
    assert " 6h " in command
    shell = _cron_start(home, command)
    try:
        events = home / "runs" / "latest" / "events.jsonl"
        assert wait_for(lambda: "run_started" in _text(events), timeout_s=600, proc=shell)
        os.kill(_timeout_pid(shell.pid), signal.SIGALRM)

        code = shell.wait(timeout=600)
    finally:
        kill_tree(shell)

    summary = json.loads((home / "runs" / "latest" / "summary.json").read_text())
    assert (code, summary["status"]) == (130, "interrupted")


def _cron_start(home: Path, command: str) -> subprocess.Popen:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(["/bin/sh", "-c", command], cwd=home, env=env, start_new_session=True)


def _text(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


def _timeout_pid(session: int) -> int:
    """The `timeout` process of the session the cron line runs in."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            sid = int((proc / "stat").read_text().rpartition(")")[2].split()[3])
        except (OSError, ValueError, IndexError):
            continue
        if sid == session and Path(argv[0].decode()).name == "timeout":
            return int(proc.name)
    raise AssertionError("no timeout process in the cron line's session")
