"""bench/bench_jsboundary.py's table: the JavaScript boundary against plain `node --test`, its
target said plainly, met or not. No timing: the numbers are made up, the rendering is checked."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.render_runner import render_js_boundary  # noqa: E402


def _doc(ratio: float) -> dict:
    cell = {"median": 1.0, "low": 0.9, "high": 1.1}
    return {
        "command": "python -m bench.bench_jsboundary --rounds 3",
        "rounds": 3,
        "sandbox": "bwrap",
        "boundary_in_effect": True,
        "load_average": [0.5, 0.6],
        "suite": "tasks/js_example: 3 tasks, 3 test files",
        "seconds": dict.fromkeys(("plain", "in_process", "boundary"), cell),
        "ratio_to_plain": {
            "in_process": cell,
            "boundary": {"median": ratio, "low": ratio, "high": ratio},
        },
        "target": {"target": 1.5, "measured": ratio, "met": ratio <= 1.5},
    }


def _with_cpu(doc: dict) -> dict:
    cpu = {"median": 0.4, "low": 0.3, "high": 0.5}
    ratio = {"median": 2.5, "low": 2.4, "high": 2.6}
    return {
        **doc,
        "pairing": "per task",
        "cpu_seconds": dict.fromkeys(("plain", "in_process", "boundary"), cpu),
        "cpu_ratio_to_plain": {"in_process": ratio, "boundary": ratio},
    }


def test_the_js_boundary_target_is_reported_with_its_margin() -> None:
    """Over the target, the table says NOT met and by how much; under it, met."""
    over = "\n".join(render_js_boundary(_doc(1.82)))
    under = "\n".join(render_js_boundary(_doc(1.2)))

    assert "boundary/plain (wall clock) 1.82 (target ≤ 1.50): NOT met (over by 0.32)" in over
    assert "boundary/plain (wall clock) 1.20 (target ≤ 1.50): met" in under
    assert "| tasks/js_example: 3 tasks, 3 test files (wall) | 1.00 [0.90–1.10] |" in under
    assert "(CPU" not in under


def test_the_cpu_row_is_shown_where_the_cpu_time_was_counted() -> None:
    """A document with CPU seconds gets a second row, its ratios beside the wall clock's."""
    table = "\n".join(render_js_boundary(_with_cpu(_doc(1.2))))

    assert (
        "| tasks/js_example: 3 tasks, 3 test files (CPU, every process) | 0.40 [0.30–0.50] |"
        in table
    )
    assert "2.50 [2.40–2.60]x | 2.50 [2.40–2.60]x |" in table
    assert "per task, sandbox bwrap" in table
