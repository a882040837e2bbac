"""The principle judge's calibration stage: precision and recall per principle on a labelled
set (bench/judge_set/), through the real judge prompt and the strict verdict parser.

On the simulator the judge's accuracy is an assumption (sim_model.yaml `judge:`): it sees a
broken principle by construction and errs with assumed chances, so these figures measure the
prompt, the parser and the evidence rule under that assumption, not a model. A principle may
be shown in the summary (`loop.judge.shown`) only at precision >= 0.9 on >= 30 labelled
candidates; `python -m bench.judge` writes bench/results/judge.json and .md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from harness.extract import parse_verdict
from harness.llm import CallRequest, Route
from harness.prompts import PromptSet, default_prompts_dir, task_context
from harness.sim import SimModel, SimProvider
from harness.tasks import TaskSpec

__all__ = ["judge_stage", "render_judge"]

SET = Path(__file__).resolve().parent / "judge_set"
RESULTS = Path(__file__).resolve().parent / "results"
MIN_PRECISION, MIN_CASES = 0.9, 30  # the bar for a principle to be shown
ROUTE = Route("cheap", "sim", "gemini-3.8-flash", 4096)


def _spec(task: dict[str, str]) -> TaskSpec:
    return TaskSpec(
        id="payments",
        base_dir=SET,
        reference=(SET / task["reference"],),
        tests=(SET / task["tests"],),
        output=SET / task["output"],
        solution=SET / task["solution"],
    )


def _judgements(seeds: Sequence[int], model: SimModel | None) -> tuple[list[dict], list]:
    """Each (candidate, seed): the labelled principles and what the judge flagged."""
    labels = yaml.safe_load((SET / "labels.yaml").read_text())
    spec = _spec(labels["task"])
    prompts = PromptSet(default_prompts_dir(), spec.type)
    context = task_context(spec)
    rows = []
    sims = {seed: SimProvider({spec.id: spec}, seed=seed, model=model) for seed in seeds}
    for name, broken in labels["candidates"].items():
        code = (SET / "candidates" / f"{name}.py").read_text()
        prompt = prompts.render("judge", {**context, "code": code})
        for seed, sim in sims.items():
            reply = sim.complete(CallRequest(ROUTE, prompt, spec.id, "judge", 1)).text
            reading = parse_verdict(reply, [p.number for p in prompts.principles], code)
            slugs = {p.number: p.slug for p in prompts.principles}
            rows.append(
                {
                    "candidate": name,
                    "seed": seed,
                    "labelled": sorted(broken),
                    "flagged": sorted(slugs[v.principle] for v in reading.broken),
                    "parse_error": reading.problem is not None,
                }
            )
    return rows, list(prompts.principles)


def judge_stage(seeds: Sequence[int] = tuple(range(10)), model: SimModel | None = None) -> dict:
    """The stage's record: per principle TP/FP/FN/TN over (candidate, seed), precision,
    recall, the labelled candidates behind them and whether the principle may be shown."""
    rows, principles = _judgements(seeds, model)
    candidates = {r["candidate"] for r in rows}
    per: list[dict[str, Any]] = []
    for p in principles:
        read = [r for r in rows if not r["parse_error"]]
        tp = sum(p.slug in r["flagged"] and p.slug in r["labelled"] for r in read)
        fp = sum(p.slug in r["flagged"] and p.slug not in r["labelled"] for r in read)
        fn = sum(p.slug not in r["flagged"] and p.slug in r["labelled"] for r in read)
        precision = tp / (tp + fp) if tp + fp else None
        broken = {r["candidate"] for r in rows if p.slug in r["labelled"]}
        per.append(
            {
                "principle": p.number,
                "slug": p.slug,
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "tn": len(read) - tp - fp - fn,
                "precision": precision,
                "recall": tp / (tp + fn) if tp + fn else None,
                "labelled_broken": len(broken),
                "may_show": precision is not None
                and precision >= MIN_PRECISION
                and len(candidates) >= MIN_CASES,
            }
        )
    return {
        "label": "simulator: the judge's accuracy is an assumption (sim_model.yaml judge:)",
        "candidates": len(candidates),
        "seeds": list(seeds),
        "judgements": len(rows),
        "parse_errors": sum(r["parse_error"] for r in rows),
        "principles": per,
        "bar": {"precision": MIN_PRECISION, "labelled_candidates": MIN_CASES},
    }


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{Decimal(value * 100).quantize(Decimal('0.1'))}%"


def render_judge(stage: dict) -> str:
    """The stage as a markdown table, with its label."""
    lines = [
        "### Principle judge (labelled set)",
        "",
        f"*{stage['label']}.* {stage['candidates']} labelled candidates × "
        f"{len(stage['seeds'])} seeds = {stage['judgements']} judgements; "
        f"{stage['parse_errors']} unreadable verdicts (outcome parse_error, excluded below). "
        f"Shown only at precision ≥ {stage['bar']['precision']} on ≥ "
        f"{stage['bar']['labelled_candidates']} labelled candidates.",
        "",
        "| principle | TP | FP | FN | TN | precision | recall | may be shown |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in stage["principles"]:
        lines.append(
            f"| {p['principle']}. {p['slug']} | {p['tp']} | {p['fp']} | {p['fn']} | {p['tn']} "
            f"| {_pct(p['precision'])} | {_pct(p['recall'])} | {'yes' if p['may_show'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    """Write bench/results/judge.json and judge.md; print the table."""
    stage = judge_stage()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "judge.json").write_text(json.dumps(stage, indent=1) + "\n")
    table = render_judge(stage)
    (RESULTS / "judge.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
