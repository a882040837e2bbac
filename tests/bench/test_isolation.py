"""bench/bench_isolation.py: the per-test figures come from the 3- and 100-test suites of the
same round, and the rendered table says plainly when a target is not met. No timing: the
numbers here are made up, the arithmetic on them is what is checked."""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.bench_isolation import _per_test  # noqa: E402
from bench.render_runner import render_isolation  # noqa: E402


def _raw(plain: tuple[float, float], boundary: tuple[float, float]) -> dict:
    """Three identical rounds: (seconds at 3 tests, seconds at 100 tests) per measure."""
    one = {"plain": plain, "in_process": boundary, "boundary": boundary}
    return {n: {m: [v[i]] * 3 for m, v in one.items()} for i, n in ((0, 3), (1, 100))}


def test_per_test_cost_is_the_slope_from_3_to_100_tests_against_plain_pytest() -> None:
    """One more test costs (t100 - t3) / 97 per measure; the overhead is that over plain's."""
    got = _per_test(_raw((1.0, 1.97), (1.5, 2.955)), random.Random(0))

    assert (round(got["ms"]["plain"]["median"], 6), round(got["ms"]["boundary"]["median"], 6)) == (
        10.0,
        15.0,
    )
    assert round(got["overhead"]["boundary"]["median"], 6) == 0.5


def test_a_target_not_met_is_reported_with_its_margin() -> None:
    """The rendered table names a missed target as NOT met and by how much."""
    cell = {"median": 1.0, "low": 1.0, "high": 1.0}
    iso = {
        "command": "python -m bench.bench_isolation --rounds 3",
        "rounds": 3,
        "sandbox": "bwrap",
        "boundary_in_effect": True,
        "load_average": [0.5, 0.6],
        "sizes": [],
        "per_test": {"ms": dict.fromkeys(("plain", "in_process", "boundary"), cell),
                     "overhead": dict.fromkeys(("in_process", "boundary"), cell)},
        "targets": {"per_test_overhead_at_100": {"target": 0.1, "measured": 0.25, "met": False}},
    }  # fmt: skip

    text = "\n".join(render_isolation(iso))

    assert "per_test_overhead_at_100 +25% (target ≤ +10%): NOT met (over by +15%)" in text
