"""The judge's bench stage: precision and recall per principle on the labelled set, labelled
as the simulator's assumption, and no principle shown below the bar."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.judge import judge_stage, render_judge  # noqa: E402
from harness.sim import SimModel  # noqa: E402

EXACT = SimModel.shipped().with_values(
    {"judge.miss": 0, "judge.false_flag": 0, "judge.malformed": 0}
)


def test_an_exact_judge_scores_what_its_detectors_see() -> None:
    """With no assumed error, every principle is precise; recall falls short only where the
    simulator cannot see a break (an error swallowed to look successful)."""
    stage = judge_stage(seeds=(0,), model=EXACT)

    scores = [(p["slug"], p["precision"], p["recall"]) for p in stage["principles"]]

    assert scores == [
        ("target-only", 1.0, 1.0),
        ("no-special-cases", 1.0, 1.0),
        ("public-names", 1.0, 1.0),
        ("honest-results", 1.0, 2 / 3),
    ]


def test_the_stage_is_labelled_an_assumption_and_shows_nothing_below_the_bar() -> None:
    """The record says the accuracy is assumed; with fewer than 30 labelled candidates no
    principle may be shown, and every judgement is counted once per principle."""
    stage = judge_stage(seeds=(0, 1, 2))
    counted = {p["tp"] + p["fp"] + p["fn"] + p["tn"] for p in stage["principles"]}

    assert "assumption" in stage["label"] and "assumption" in render_judge(stage)
    assert (stage["candidates"] < 30, [p["may_show"] for p in stage["principles"]]) == (
        True,
        [False] * 4,
    )
    assert counted == {stage["judgements"] - stage["parse_errors"]}
