"""bench/same.py: two bench records compared figure by figure, timings aside."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.same import differences  # noqa: E402

RECORD = {
    "duration_s": 12.0,
    "machine": {"load_average_at_start": [1.0]},
    "figures": {"test_memo": {"harness": {"hits": 3}}, "cost": 0.25, "nights_reused": 2},
    "nights": [{"wall_s": 1.0, "tasks": [{"cost_usd": 0.1, "test_s": 0.5}]}],
}


def test_timings_machine_and_memory_counts_are_not_figures() -> None:
    """Records that differ only in timings, machine and memo counts hold the same figures."""
    other = {
        "duration_s": 99.0,
        "machine": {"load_average_at_start": [9.0]},
        "figures": {"test_memo": {"harness": {"hits": 0}}, "cost": 0.25, "nights_reused": 0},
        "nights": [{"wall_s": 7.0, "tasks": [{"cost_usd": 0.1, "test_s": 3.0}]}],
    }

    assert list(differences(RECORD, other)) == []


def test_a_moved_figure_is_named_by_its_path() -> None:
    """A cost that moved by a micro-dollar, a missing key and a shorter list are each shown."""
    other = {
        "duration_s": 12.0,
        "machine": {},
        "figures": {"test_memo": {}, "cost": 0.250001},
        "nights": [],
    }

    assert list(differences(RECORD, other)) == [
        "$.figures.cost: 0.25 vs 0.250001",
        "$.nights (length 1 vs 0)",
    ]
