"""Context tools off and on (`loop.context_tools`), on a task list that names `capabilities:`
and `examples:` and on the same list without them: four nights per seed, the shipped loop
otherwise. `make bench` runs it on the simulator; `python -m bench --live --context` on the
live providers, under a hard cap.

On the simulator the benefit is by construction: the simulated model asks only for a block
its prompt lacks (harness/sim/asks.py) and, once a tool result shows it, errs as if the
prompt had held it (sim_model.yaml's `missing_context_bug` and `context_lift`). What the
simulator measures for real is the price: the rounds, the tool definitions and results
billed as input, and that the loop, budget and records hold with tools on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from bench.harness_night import run_harness
from bench.model import Night
from bench.policies import INTERACTIVE
from bench.workspace import make_workspace

if TYPE_CHECKING:
    from bench.stages import Stages

__all__ = ["LISTS", "ON", "bare_list", "context_ab", "context_table", "render_context"]

ON = "loop: {context_tools: {enabled: true}}\n"
LISTS = ("full", "bare")  # with capabilities/examples, and the same list without them
TASKS = 8  # tasks per night (at most the bench's own count): four nights per seed
NOTE = (
    "On the simulator the gain of tools is by construction: the simulated model asks only "
    "for a block its prompt lacks and, once it has read it, errs as if the prompt held it. "
    "The cost of the rounds (tool definitions, turns and results billed as input) is "
    "measured, not assumed."
)


def bare_list(tasks_yaml: Path) -> Path:
    """The same task list without `capabilities:` and `examples:` (beside it, so every file
    it named is still readable by the tools)."""
    data = yaml.safe_load(tasks_yaml.read_text())
    for entry in [data.get("defaults") or {}, *data["tasks"]]:
        entry.pop("capabilities", None)
        entry.pop("examples", None)
    bare = tasks_yaml.with_name(f"{tasks_yaml.stem}_bare.yaml")
    bare.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
    return bare


def tool_requests(run_dir: Path) -> int:
    """`context_request` events of a run dir's latest run."""
    events = (run_dir / "latest" / "events.jsonl").read_text().splitlines()
    return sum(1 for line in events if '"context_request"' in line)


def nights(
    workdir: Path,
    seeds: tuple[int, ...],
    night: Callable[[Path, Path, Path, str, int], Night],
    copy: Callable[[Path], Path],
    base_config: str = "",
) -> list[tuple[Night, int]]:
    """Each seed's four nights, each (night, tool requests), on a fresh copy of the tasks:
    `copy(folder)` makes one and returns its list; `night(list, runs, config, variant,
    seed)` runs it."""
    out = []
    for seed in seeds:
        for which in LISTS:
            for tools in ("off", "on"):
                variant = f"context_{which}_{tools}"
                folder = workdir / f"{variant}-s{seed}"
                tasks = copy(folder / "ws")
                tasks = tasks if which == "full" else bare_list(tasks)
                config = folder / "harness.yaml"
                config.write_text(base_config + (ON if tools == "on" else ""))
                ran = night(tasks, folder / "runs", config, variant, seed)
                out.append((ran, tool_requests(folder / "runs")))
    return out


def context_table(ran: list[tuple[Night, int]], note: str = NOTE) -> dict[str, Any]:
    """Per variant: pass rate, cost, cost per pass, calls and tool requests per task; and,
    per list, tools on ÷ off."""
    rows: dict[str, dict[str, Any]] = {}
    for night, requests in ran:
        row = rows.setdefault(
            night.variant, {"tasks": 0, "passing": 0, "cost": 0.0, "calls": 0, "requests": 0}
        )
        row["tasks"] += len(night.tasks)
        row["passing"] += sum(t.passing for t in night.tasks)
        row["cost"] += night.spent_usd
        row["calls"] += sum(t.calls for t in night.tasks)
        row["requests"] += requests
    table = {v: _figures(r) for v, r in rows.items()}
    ratios = {}
    for which in LISTS:
        on, off = table.get(f"context_{which}_on"), table.get(f"context_{which}_off")
        if on and off:
            ratios[which] = {
                k: _ratio(on[k], off[k]) for k in ("pass_rate", "cost_usd", "cost_per_pass_usd")
            }
    return {"variants": table, "on_over_off": ratios, "note": note}


def _figures(r: dict[str, Any]) -> dict[str, Any]:
    n = r["tasks"] or 1
    return {
        "tasks": r["tasks"],
        "pass_rate": r["passing"] / n,
        "cost_usd": r["cost"],
        "cost_per_pass_usd": r["cost"] / r["passing"] if r["passing"] else None,
        "calls_per_task": r["calls"] / n,
        "tool_requests_per_task": r["requests"] / n,
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def context_ab(st: Stages) -> dict[str, Any]:
    """The A/B on the simulator, inside a bench run."""
    tasks = min(TASKS, st.s.tasks)

    def copy(folder: Path) -> Path:
        return make_workspace(folder, tasks, st.s.max_attempts).tasks_yaml

    def night(tasks_yaml: Path, runs: Path, config: Path, variant: str, seed: int) -> Night:
        memo = st.memos["harness"]
        ran = run_harness(tasks_yaml, runs, seed=seed, concurrency=4, config=config,
                          variant=variant, memo=memo, reuse=True)  # fmt: skip
        return st.say(ran)

    # bought interactively, as every policy night (bench/policies.py)
    return context_table(nights(st.workdir / "context", st.s.seeds, night, copy, INTERACTIVE))


def render_context(figure: dict[str, Any] | None) -> list[str]:
    """The A/B as a markdown table, its ratios and the by-construction note."""
    if not figure:
        return []
    cols = ("tasks listed with", "tools", "pass rate", "cost", "cost per pass", "calls/task")
    head = "| " + " | ".join((*cols, "tool requests/task")) + " |"
    lines = ["### Context tools off and on", "", head, "|---" * (len(cols) + 1) + "|"]
    for which, label in (("full", "capabilities + examples"), ("bare", "neither")):
        for tools in ("off", "on"):
            f = figure["variants"].get(f"context_{which}_{tools}")
            if f is None:
                continue
            per_pass = "—" if f["cost_per_pass_usd"] is None else f"${f['cost_per_pass_usd']:.4f}"
            lines.append(
                f"| {label} | {tools} | {100 * f['pass_rate']:.1f}% | ${f['cost_usd']:.4f} | "
                f"{per_pass} | {f['calls_per_task']:.2f} | {f['tool_requests_per_task']:.2f} |"
            )
    lines.append("")
    for which, r in figure["on_over_off"].items():
        shown = ", ".join(f"{k} {v:.2f}×" for k, v in r.items() if v is not None)
        lines.append(f"- tools on ÷ off, list {which}: {shown}")
    return [*lines, "", f"*{figure['note']}*", ""]


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.context [--tasks N] [--seeds N] [--out FILE]`: this A/B alone on the
    simulator (no latency), written as JSON and markdown."""
    import argparse
    import tempfile
    from dataclasses import replace

    from bench.stages import Settings, Stages
    from harness.log import configure_logging

    parser = argparse.ArgumentParser(prog="python -m bench.context", description=main.__doc__)
    parser.add_argument("--tasks", type=int, default=TASKS)
    parser.add_argument("--seeds", type=int, default=2)
    out = Path(__file__).parent / "results" / "context.json"
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args(argv)
    configure_logging(None, level="error")  # the runs' own events still go to their files
    settings = replace(Settings(), tasks=args.tasks, seeds=tuple(range(args.seeds)))
    with tempfile.TemporaryDirectory(prefix="harness-bench-context-") as scratch:
        figure = context_ab(Stages(settings, Path(scratch), quiet=False))
    args.out.write_text(json.dumps(figure, indent=1) + "\n")
    args.out.with_suffix(".md").write_text("\n".join(render_context(figure)))
    print("\n".join(render_context(figure)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
