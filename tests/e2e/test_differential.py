"""A night on the simulator: a bug no visible test reaches, caught by the differential check,
fed to the next fix prompt as its minimal input, and fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.testrun import differential
from harness.testrun.launch import bwrap_works
from tests._night import db_rows, kill_tree, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bwrap_works(), reason="the boundary needs bubblewrap"),
]

FILES = {
    "legacy/calc.py": (
        "def scale(x, lo, hi):\n    if x < lo:\n        x = lo\n    if x > hi:\n"
        "        x = hi\n    return x * 2\n"
    ),
    "_solutions/calc.py": (
        "def scale(x: int, lo: int, hi: int) -> int:\n"
        '    """x clamped to [lo, hi], then doubled."""\n'
        "    if x < lo:\n        x = lo\n    if x > hi:\n        x = hi\n    return x * 2\n"
    ),
    # Neither test reaches the upper bound.
    "acceptance/test_calc.py": (
        "from calc import scale\n\n\ndef test_inside():\n    assert scale(5, 0, 10) == 10\n\n\n"
        "def test_below():\n    assert scale(-5, 0, 10) == 0\n"
    ),
    "tasks.yaml": (
        "tasks:\n  - id: calc\n    type: module_port\n    reference: legacy/calc.py\n"
        "    tests: acceptance/test_calc.py\n    output: out/calc.py\n"
        "    solution: _solutions/calc.py\n"
        "    instructions: Add type hints and a docstring; keep the behaviour.\n"
    ),
}


# The night of seed 145 held (asleep) when it asks for attempt 2, after attempt 1 was
# recorded with its differential result.
HOLD = """\
import os, sys, time
from harness.sim import provider
original = provider.SimProvider.complete
def complete(self, request):
    if request.step == "fix":
        open(os.environ["HOLD_MARKER"], "w").close()
        time.sleep(600)
    return original(self, request)
provider.SimProvider.complete = complete
from harness.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _task_folder(base: Path, extra: str = "") -> Path:
    for rel, text in FILES.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text + (extra if rel == "tasks.yaml" else ""))
    return base / "tasks.yaml"


def _night(tasks: Path, runs: Path, seed: int) -> tuple[int, dict, Path]:
    argv = ["run", str(tasks), "--provider", "sim", "--seed", str(seed), "--run-dir", str(runs)]
    code = main([*argv, "--log-level", "error"])
    root = (runs / "latest").resolve()
    return code, json.loads((root / "summary.json").read_text()), root


def test_the_check_costs_the_night_nothing(tmp_path: Path) -> None:
    """Seed 2 drafts an honest port at once: with the check on, it agrees on every call,
    and the night makes the same calls at the same cost as with the check off."""
    on = _night(_task_folder(tmp_path / "on"), tmp_path / "on" / "runs", 2)
    off_list = _task_folder(tmp_path / "off", "    differential: {enabled: false}\n")
    off = _night(off_list, tmp_path / "off" / "runs", 2)

    [checked], [unchecked] = on[1]["tasks"], off[1]["tasks"]
    assert checked["differential"]["differed"] == 0 and checked["differential"]["agreed"] >= 200
    assert "differential" not in unchecked
    assert (on[0], checked["status"], checked["cost_usd"]) == (0, "passed", unchecked["cost_usd"])
    assert on[1]["budget"]["spent_usd"] == off[1]["budget"]["spent_usd"] > 0
    calls = [sorted(p.name for p in (r / "calls" / "calc").iterdir()) for r in (on[2], off[2])]
    assert calls[0] == calls[1]


def test_an_unreached_bug_is_caught_shown_as_its_minimal_call_and_fixed(tmp_path: Path) -> None:
    """Seed 145: the simulator's first draft drops the upper clamp; both tests pass, the
    differential check finds a small call above the bound, the fix prompt shows that call
    and both results, and the fix agrees with the reference on every call; the task passes
    with no difference left."""
    code, summary, root = _night(_task_folder(tmp_path), tmp_path / "runs", 145)

    [task] = summary["tasks"]
    first, second = task["attempts"][:2]
    assert (code, task["status"], task["best_attempt"]) == (0, "passed", 2)
    assert (first["passed"], first["total"], first["differential"]["differed"]) == (2, 2, 1)
    [difference] = first["differential"]["differences"]
    call = difference.split("`")[1]  # the shrunk call, e.g. scale(1, 0, 0)
    x, lo, hi = (int(n) for n in call.removeprefix("scale(")[:-1].split(", "))
    assert max(x, lo) > hi and max(abs(x), abs(lo), abs(hi)) <= 16  # past the dropped clamp
    prompt = (root / "calls" / "calc" / "2-fix.prompt.md").read_text()
    assert f"### differential: `{call}`" in prompt and difference in prompt
    assert second["differential"]["differed"] == 0 and second["differential"]["agreed"] >= 200
    assert task["differential"]["differed"] == 0


def test_a_replay_reads_the_recorded_differential_results_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay of the night of seed 145 gets each attempt's differential result from the
    recording, the same as recorded, and starts no process to check again: neither the
    reference nor a candidate is launched; the fix prompt is the recorded one."""
    started: list[str] = []
    launch = differential.Process.start

    def counted(self: differential.Process) -> None:
        started.append(self.name)
        launch(self)

    monkeypatch.setattr(differential.Process, "start", counted)
    tasks = _task_folder(tmp_path)
    _, summary, root = _night(tasks, tmp_path / "runs", 145)
    assert len(started) >= 4  # the night checked both attempts: a reference and a candidate each
    started.clear()

    argv = ["run", str(tasks), "--provider", "replay", "--replay-from", str(root)]
    code = main([*argv, "--run-dir", str(tmp_path / "again"), "--log-level", "info"])

    again = (tmp_path / "again" / "latest").resolve()
    replayed = json.loads((again / "summary.json").read_text())
    [task], [recorded] = replayed["tasks"], summary["tasks"]
    assert (code, started) == (0, [])
    assert [a["differential"] for a in task["attempts"]] == [
        a["differential"] for a in recorded["attempts"]
    ]
    assert task["differential"] == recorded["differential"]
    fix = Path("calls") / "calc" / "2-fix.prompt.md"
    assert (again / fix).read_text() == (root / fix).read_text()
    events = [json.loads(line) for line in (again / "events.jsonl").read_text().splitlines()]
    served = [e for e in events if e["event"] == "differential_served"]
    assert len(served) == len(task["attempts"]) == 2


def test_a_resume_checks_only_the_attempt_it_had_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A night killed (SIGKILL) after attempt 1 was recorded with its differential result,
    then resumed: attempt 1 keeps the recorded result, and only attempt 2 is checked (one
    reference and one candidate process started); the fix prompt names the recorded call."""
    tasks, runs, marker = _task_folder(tmp_path), tmp_path / "runs", tmp_path / "held"
    script = tmp_path / "hold.py"
    script.write_text(HOLD)
    argv = [sys.executable, str(script), "run", str(tasks), "--provider", "sim", "--seed",
            "145", "--run-dir", str(runs), "--log-level", "error"]  # fmt: skip
    env = {**os.environ, "HOLD_MARKER": str(marker)}
    with open(tmp_path / "log", "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, env=env, start_new_session=True)
    try:
        wait_for(marker.exists, 300, proc)
        proc.kill()
        proc.wait()
    finally:
        kill_tree(proc)
    sql = "SELECT n, result FROM attempts WHERE task_id='calc' ORDER BY n"
    [(n, stored)] = db_rows(runs / "harness.db", sql)
    recorded = json.loads(stored)["differential"]
    assert (n, recorded["differed"]) == (1, 1)
    started: list[str] = []
    launch = differential.Process.start

    def counted(self: differential.Process) -> None:
        started.append(self.name)
        launch(self)

    monkeypatch.setattr(differential.Process, "start", counted)

    argv = ["run", str(tasks), "--provider", "sim", "--seed", "145", "--resume", "latest"]
    code = main([*argv, "--run-dir", str(runs), "--log-level", "error"])

    root = (runs / "latest").resolve()
    [task] = json.loads((root / "summary.json").read_text())["tasks"]
    first, second = task["attempts"][:2]
    assert (code, task["status"], started) == (0, "passed", ["calc", "calc"])
    [difference] = first["differential"]["differences"]
    assert first["differential"]["differed"] == 1 and difference.split("`")[1] in str(recorded)
    assert second["differential"]["differed"] == 0
    prompt = (root / "calls" / "calc" / "2-fix.prompt.md").read_text()
    assert difference in prompt
