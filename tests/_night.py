"""Helpers for the unattended-night tests: small task lists on disk, the CLI as a real process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.cli import main

# A module with a few dozen mutation sites, so the simulator's walk has room to go wrong.
SOLUTION = """\
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def total(items):
    s = 0
    for price, qty in items:
        s += price * qty
    return s


def discount(amount, pct):
    if pct <= 0:
        return amount
    return amount - amount * pct // 100


def grade(score):
    if score >= 90:
        return "A"
    if score >= 75:
        return "B"
    if score >= 50:
        return "C"
    return "F"


def bucket(n, size):
    return n // size * size


def unique(words):
    seen = []
    for w in words:
        if w not in seen:
            seen.append(w)
    return seen
"""

LEGACY = """\
def dispatch(action, payload):
    print("dispatch", action)
    if action == "clamp":
        x, lo, hi = payload["x"], payload["lo"], payload["hi"]
        return (200, {"value": min(max(x, lo), hi)})
    if action == "total":
        return (200, {"value": sum(p * q for p, q in payload["items"])})
    raise Exception("unknown action")
"""

TESTS = """\
from {module} import bucket, clamp, discount, grade, total, unique


def test_clamp_low():
    assert clamp(-1, 0, 10) == 0


def test_clamp_high(ten):
    assert clamp(11, 0, ten) == ten


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_edges():
    assert (clamp(0, 0, 10), clamp(10, 0, 10)) == (0, 10)


def test_total():
    assert total([(3, 2), (5, 1)]) == 11


def test_total_empty():
    assert total([]) == 0


def test_discount():
    assert discount(200, 10) == 180


def test_discount_none():
    assert discount(200, 0) == 200


def test_grade_a():
    assert grade(95) == "A"


def test_grade_b():
    assert grade(75) == "B"


def test_grade_c():
    assert grade(50) == "C"


def test_grade_f():
    assert grade(10) == "F"


def test_bucket():
    assert bucket(17, 5) == 15


def test_unique():
    assert unique(["a", "b", "a", "c"]) == ["a", "b", "c"]
"""

CONFTEST = """\
import pytest


@pytest.fixture
def ten():
    return 10
"""

SLOW_TESTS = """\
import time

from {module} import clamp


def test_slow():
    time.sleep({seconds})
    assert clamp(5, 0, 10) == 5
"""


@dataclass(frozen=True)
class Task:
    """One task of a generated list. `solved`: the reference already is the answer (no
    solution file), so the simulator replies with it and the task passes at attempt 1."""

    id: str
    solved: bool = False
    max_attempts: int = 4
    slow_s: float = 0.0  # > 0: a single test that sleeps this long (holds the run dir)


def write_tasks(folder: Path, tasks: Iterable[Task]) -> Path:
    """Write a task list and its inputs under `folder`; returns the tasks.yaml path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conftest.py").write_text(CONFTEST)
    lines = ["tasks:"]
    for task in tasks:
        module = f"{task.id}_service"
        reference = SOLUTION if task.solved else LEGACY
        tests = SLOW_TESTS.format(module=module, seconds=task.slow_s) if task.slow_s else TESTS
        _put(folder / "legacy" / f"{task.id}.py", reference)
        _put(folder / "acceptance" / f"test_{task.id}.py", tests.format(module=module))
        lines += [
            f"  - id: {task.id}",
            f"    reference: legacy/{task.id}.py",
            f"    tests: acceptance/test_{task.id}.py",
            f"    output: out/{module}.py",
            "    support: [conftest.py]",
            f"    max_attempts: {task.max_attempts}",
        ]
        if not task.solved:
            _put(folder / "solutions" / f"{module}.py", SOLUTION)
            lines.append(f"    solution: solutions/{module}.py")
    path = folder / "tasks.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# Running the CLI.


def run_cli(tasks: Path, runs: Path, *extra: str) -> tuple[int, dict, Path]:
    """`harness run` in this process on the simulator: (exit code, summary.json, run folder)."""
    argv = ["run", str(tasks), "--provider", "sim", "--run-dir", str(runs), "--log-level", "error"]
    code = main([*argv, *extra])
    root = (runs / "latest").resolve()
    return code, json.loads((root / "summary.json").read_text()), root


def start_cli(tasks: Path, runs: Path, *extra: str, log: Path) -> subprocess.Popen:
    """`python -m harness run` as a real process in its own session (so its whole tree can be
    killed by process group); stdout and stderr go to `log`."""
    argv = [sys.executable, "-m", "harness", "run", str(tasks), "--provider", "sim",
            "--run-dir", str(runs), *extra]  # fmt: skip
    with open(log, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def kill_tree(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Signal the process group this test started (the harness and its test subprocesses)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)


def wait_for(predicate, timeout_s: float = 60.0, proc: subprocess.Popen | None = None) -> bool:
    """Poll until `predicate()` holds; False if `proc` exits first (the deadline only guards
    against a hung test, it is not an assertion about speed)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        if proc is not None and proc.poll() is not None:
            return predicate()
        time.sleep(0.01)
    raise TimeoutError("condition not reached")


# Reading what a run left behind.


def events(root: Path) -> list[dict]:
    """Every complete event line of a run folder's events.jsonl."""
    path = root / "events.jsonl"
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    return [json.loads(line) for line in lines if line.endswith("}")]


def count(root: Path, event: str) -> int:
    return sum(1 for e in events(root) if e["event"] == event)


def db_rows(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    """Read the run store with a plain connection (read-only; WAL lets it run beside a writer)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def db_dicts(db: Path, sql: str, params: tuple = ()) -> list[dict]:
    """Like `db_rows`, each row as a column → value dict."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()


def latest_run_id(runs: Path) -> str | None:
    link = runs / "latest"
    return os.readlink(link) if link.is_symlink() else None
