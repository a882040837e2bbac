"""bench/stages.py: an untimed night asked for again is the one already run, keyed by what
decides it (a behaviour model by its values, not its name); different inputs run anew."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.model import Night  # noqa: E402
from bench.stages import Settings, Stages, _model_key  # noqa: E402
from harness.sim import SimModel  # noqa: E402


def _stages(tmp_path: Path) -> Stages:
    return Stages(Settings(tasks=1, seeds=(0,)), tmp_path, quiet=True)


def _night(seed: int) -> Night:
    return Night("harness", seed, 4, None, 0.1, 0.5, 1000.0, ())


def test_a_night_asked_again_is_not_run_again(tmp_path: Path) -> None:
    """The same key twice runs once and returns the first night; another key runs."""
    st, runs = _stages(tmp_path), []

    def run(seed: int) -> Night:
        runs.append(seed)
        return _night(seed)

    first = st._once(("harness", 0), lambda: run(0))
    again = st._once(("harness", 0), lambda: run(0))
    other = st._once(("harness", 1), lambda: run(1))

    assert (again is first, other.seed, runs, st.nights_reused) == (True, 1, [0, 1], 1)


def test_a_model_is_keyed_by_its_values_not_its_name() -> None:
    """The shipped model under a sweep's name keys like no model; a moved value does not."""
    shipped = SimModel.shipped()
    moved = shipped.with_values({"fix.attempt_decay": 0.4})

    same = _model_key(("centre", shipped)) == _model_key(None)
    differs = _model_key(("decay-low", moved)) != _model_key(None)

    assert (same, differs) == (True, True)
