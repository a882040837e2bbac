"""A simulated night with context tools on: the simulator asks for what its prompt lacks;
`--show tools` lists the rounds; SIGKILL between two rounds then `--resume` buys nothing
recorded again; a replay with the read files deleted reproduces the night; carry-over
looks again at a task whose read files changed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import structlog

from harness.cli import main
from tests._night import db_rows, events, kill_tree, wait_for
from tests.conftest import write

pytestmark = pytest.mark.slow

SEED = "0"  # a seed whose night asks in its write and its fix and passes at attempt 2
WAIT_S = 120  # a hung run fails the test instead of hanging the suite; not a speed assertion

# A forgotten platform stub and an already-ported example, readable but not in the list.
FILES = {
    "plat/__init__.py": "def double(x):\n    return 2 * x\n\n\n"
    "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n",
    "plat/caps.pyi": 'def double(x: int) -> int:\n    """Twice x."""\n\n'
    'def clamp(x: int, lo: int, hi: int) -> int:\n    """x limited to [lo, hi]."""\n',
    "gold/pricing_service.py": "from plat import double\n\n\ndef price(x):\n    return double(x)\n",
    "legacy/calc.py": "def quad(x):\n    return x * 4\n\n\ndef limit(x):\n    return x\n",
    "solutions/calc_service.py": "from plat import clamp, double\n\n\ndef quad(x):\n"
    "    return double(double(x))\n\n\ndef limit(x):\n    return clamp(x, 0, 100)\n\n\n"
    "def total(items):\n    s = 0\n    for price, qty in items:\n        s += price * qty\n"
    "    return s\n",
    "acceptance/test_calc.py": "from calc_service import limit, quad, total\n\n\n"
    "def test_quad():\n    assert quad(3) == 12\n\n\n"
    "def test_limit_low():\n    assert limit(-5) == 0\n\n\n"
    "def test_limit_high():\n    assert limit(500) == 100\n\n\n"
    "def test_limit_inside():\n    assert limit(42) == 42\n\n\n"
    "def test_total():\n    assert total([(3, 2), (5, 1)]) == 11\n\n\n"
    "def test_total_empty():\n    assert total([]) == 0\n",
    "tasks.yaml": "tasks:\n  - id: calc\n    reference: legacy/calc.py\n"
    "    tests: acceptance/test_calc.py\n    output: out/calc_service.py\n"
    "    solution: solutions/calc_service.py\n    support: [plat/]\n    max_attempts: 6\n",
    "on.yaml": "loop: {review: false, context_tools: {enabled: true}}\n",
}

# Runs the CLI with the simulator held just before a step's second round: the first round's
# reply and tool results are recorded by then; the test kills the process there.
HOLD = """\
import os, sys, time
from harness.sim import provider
original = provider.SimProvider.complete
def complete(self, request):
    if request.step.endswith("+1") and not os.path.exists(os.environ["HOLD_MARKER"]):
        open(os.environ["HOLD_MARKER"], "w").close()
        time.sleep(600)
    return original(self, request)
provider.SimProvider.complete = complete
from harness.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(autouse=True)
def restore_logging():
    """A run configures structlog to write its events file; undo that for later tests."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def make(folder: Path) -> Path:
    for name, text in FILES.items():
        write(folder / name, text)
    return folder / "tasks.yaml"


def night(tasks: Path, runs: Path, *extra: str) -> tuple[int, dict, Path]:
    """`harness run` with context tools on, in this process (the simulator unless `extra`
    names another provider)."""
    provider = [] if "--provider" in extra else ["--provider", "sim", "--seed", SEED]
    code = main(
        ["run", str(tasks), *provider, "--run-dir", str(runs),
         "--config", str(tasks.parent / "on.yaml"), "--log-level", "error", *extra]
    )  # fmt: skip
    root = (runs / "latest").resolve()
    return code, json.loads((root / "summary.json").read_text()), root


def reads(root: Path) -> list[tuple[str, str, bool, bool]]:
    return [
        (e["tool"], e["path"], e["ok"], bool(e.get("recorded")))
        for e in events(root)
        if e["event"] == "context_request"
    ]


def test_the_simulator_asks_for_what_its_prompt_lacks(tmp_path: Path, capsys):
    """The write reads the stub, greps for an example, reads it, then answers; `harness
    events --show tools` lists those rounds with each result's size."""
    tasks = make(tmp_path / "t")
    code, summary, root = night(tasks, tmp_path / "runs")
    capsys.readouterr()

    main(["events", str(root), "--task", "calc", "--attempt", "1", "--show", "tools"])

    shown = capsys.readouterr().out.splitlines()
    assert (code, summary["tasks"][0]["status"]) == (0, "passed")
    assert reads(root)[:3] == [
        ("read_file", "plat/caps.pyi", True, False),
        ("grep", ".", True, False),
        ("read_file", "gold/pricing_service.py", True, False),
    ]
    stub = len(FILES["plat/caps.pyi"].encode())
    assert shown[0:2] == [
        "write: 2 tool calls",
        f'  read_file {{"path": "plat/caps.pyi"}} -> ok {stub} bytes',
    ]
    assert shown[3:] == [
        "write+1: 1 tool call",
        f'  read_file {{"path": "gold/pricing_service.py"}} -> ok '
        f"{len(FILES['gold/pricing_service.py'])} bytes",
        "write+2: answered",
    ]


def _answered(runs: Path, run_id: str) -> list[tuple]:
    return db_rows(
        runs / "harness.db",
        "SELECT id, task_id, attempt, step, prompt_sha256, cost_usd FROM calls"
        " WHERE run_id=? AND stop_reason != 'in_flight' ORDER BY id",
        (run_id,),
    )


def test_kill_between_rounds_then_resume_buys_nothing_recorded_again(tmp_path: Path):
    """SIGKILL after a round's results are recorded, before the next round is sent; --resume
    reuses every answered round (its results from the store) and ships what an
    uninterrupted night ships."""
    tasks, runs, marker = make(tmp_path / "t"), tmp_path / "runs", tmp_path / "held"
    script = write(tmp_path / "hold.py", HOLD)
    argv = [sys.executable, str(script), "run", str(tasks), "--provider", "sim", "--seed", SEED,
            "--run-dir", str(runs), "--config", str(tasks.parent / "on.yaml")]  # fmt: skip
    env = {**os.environ, "HOLD_MARKER": str(marker)}
    with open(tmp_path / "log", "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, env=env, start_new_session=True)
    try:
        wait_for(marker.exists, WAIT_S, proc)
        proc.kill()
        proc.wait()
    finally:
        kill_tree(proc)
    run_id = os.readlink(runs / "latest")
    before = _answered(runs, run_id)

    code, summary, root = night(tasks, runs, "--resume")

    after = _answered(runs, run_id)
    keys = [row[1:5] for row in after]
    fresh = make(tmp_path / "u")
    _, clean, _ = night(fresh, tmp_path / "runs-u")
    assert [row[3] for row in before] == ["write"]  # killed between write and write+1
    assert (code, summary["run_id"], after[: len(before)]) == (0, run_id, before)
    assert len(keys) == len(set(keys))  # no answered round bought twice
    assert ("read_file", "plat/caps.pyi", True, True) in reads(root)  # served, not read
    assert (tasks.parent / "out" / "calc_service.py").read_text() == (
        fresh.parent / "out" / "calc_service.py"
    ).read_text()
    trail = [
        [(a["n"], a["kind"], a["passed"]) for a in s["tasks"][0]["attempts"]]
        for s in (summary, clean)
    ]
    assert trail[0] == trail[1]


def test_replay_with_the_read_files_deleted_reproduces_the_night(tmp_path: Path):
    """`--provider replay` of a tool-using simulated night, the stub and the example it read
    deleted: the same attempts, the same shipped code, every result from the recording."""
    tasks, runs = make(tmp_path / "t"), tmp_path / "runs"
    _, first, _ = night(tasks, runs)
    shipped = (tasks.parent / "out" / "calc_service.py").read_text()
    for name in ("plat/caps.pyi", "gold/pricing_service.py"):
        (tasks.parent / name).unlink()
    shutil.rmtree(tasks.parent / "out")

    code, again, root = night(tasks, runs, "--provider", "replay", "--replay-from", first["run_id"])

    assert (code, (tasks.parent / "out" / "calc_service.py").read_text()) == (0, shipped)
    assert [a["passed"] for a in again["tasks"][0]["attempts"]] == [
        a["passed"] for a in first["tasks"][0]["attempts"]
    ]
    served = reads(root)
    assert served and all(ok and recorded for _, _, ok, recorded in served)


def test_a_replay_records_the_tool_results_it_served(tmp_path: Path, capsys):
    """The replay run keeps every round's results as it served them: its tools files equal
    the recording's, and `events --show tools` of the replay prints no `error:`."""
    tasks, runs = make(tmp_path / "t"), tmp_path / "runs"
    _, first, _ = night(tasks, runs)
    recorded_root = runs / first["run_id"]

    _, _, root = night(tasks, runs, "--provider", "replay", "--replay-from", first["run_id"])
    capsys.readouterr()
    main(["events", str(root), "--show", "tools", "--task", "calc", "--attempt", "1"])
    shown = capsys.readouterr().out

    def kept(folder: Path) -> dict[str, str]:
        files = sorted(folder.glob("calls/*/*.tools.json"))
        return {str(p.relative_to(folder)): p.read_text() for p in files}

    assert (kept(root), "error:" in shown) == (kept(recorded_root), False)
    assert kept(root)


def test_carry_over_looks_again_when_a_read_file_changed(tmp_path: Path):
    """A passed task is up to date the next night while what its tools read is unchanged;
    once the example it read changes, it is not."""
    tasks, runs = make(tmp_path / "t"), tmp_path / "runs"
    night(tasks, runs)
    _, same, _ = night(tasks, runs)
    example = tasks.parent / "gold" / "pricing_service.py"
    example.write_text(example.read_text() + "\n\ndef unit():\n    return double(1)\n")

    _, changed, root = night(tasks, runs)

    assert same["tasks"][0]["cause"] == "up_to_date"
    assert changed["tasks"][0]["cause"] != "up_to_date"
    moved = [e for e in events(root) if e["event"] == "context_changed"]
    assert [e["path"] for e in moved] == [str(example.resolve())]
