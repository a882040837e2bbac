"""A night on the simulator: a bug no visible test reaches, caught by the differential check,
fed to the next fix prompt as its minimal input, and fixed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.testrun.launch import bwrap_works

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


def test_an_unreached_bug_is_caught_shown_as_its_minimal_call_and_fixed(tmp_path: Path) -> None:
    """Seed 145: the simulator's first draft drops the upper clamp; both tests pass, the
    differential check finds `scale(5, 0, 0)`, the fix prompt shows that call, and the fix
    agrees with the reference on every call; the task passes with no difference left."""
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    runs = tmp_path / "runs"
    argv = ["run", str(tmp_path / "tasks.yaml"), "--provider", "sim", "--seed", "145"]

    code = main([*argv, "--run-dir", str(runs), "--log-level", "error"])

    root = (runs / "latest").resolve()
    [task] = json.loads((root / "summary.json").read_text())["tasks"]
    first, second = task["attempts"][:2]
    assert (code, task["status"], task["best_attempt"]) == (0, "passed", 2)
    assert (first["passed"], first["total"], first["differential"]["differed"]) == (2, 2, 1)
    [difference] = first["differential"]["differences"]
    assert difference.startswith("`scale(5, 0, 0)`: the reference returns `0`")
    prompt = (root / "calls" / "calc" / "2-fix.prompt.md").read_text()
    assert "### differential: `scale(5, 0, 0)`" in prompt
    assert second["differential"]["differed"] == 0 and second["differential"]["agreed"] >= 200
    assert task["differential"]["differed"] == 0
