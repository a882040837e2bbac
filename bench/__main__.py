"""`python -m bench` (`make bench`): freeze the sources, run the suite on the copy, write
the results as JSON and markdown, print the tables. Exit 1 if an invariant check fails."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench.render import render
from bench.snapshot import run_frozen
from bench.suite import Settings, run_suite
from harness.log import configure_logging

RESULTS = Path(__file__).resolve().parent / "results"


def _parser() -> argparse.ArgumentParser:
    defaults = Settings()
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--tasks", type=int, default=defaults.tasks, help="tasks in a night")
    parser.add_argument("--seeds", type=int, default=len(defaults.seeds), help="seeds 0..N-1")
    parser.add_argument(
        "--latency-scale",
        type=float,
        default=defaults.latency_scale,
        help="simulated latency = realistic ÷ this (0: no latency)",
    )
    parser.add_argument(
        "--big-list",
        type=int,
        default=defaults.big_list,
        help="tasks in the big-list stage (0: skip)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS / "latest.json",
        help="results JSON; the markdown tables go beside it (.md)",
    )
    parser.add_argument(
        "--policies-only",
        action="store_true",
        help="the policy table, calibration and sensitivity only: no timed or capped nights, "
        "no big list, no sandbox micro-benchmark",
    )
    parser.add_argument(
        "--sensitivity-seeds",
        type=int,
        default=len(defaults.sensitivity_seeds),
        help="seeds 0..N-1 of the sensitivity sweep (0: skip it)",
    )
    parser.add_argument(
        "--isolation-rounds",
        type=int,
        default=defaults.isolation_rounds,
        help="rounds of the isolation stage (boundary vs in_process vs plain pytest; 0: skip)",
    )
    parser.add_argument(
        "--no-sweep-choices",
        action="store_true",
        help="the sweep runs the shipped loop and the published loop only, not each design "
        "choice turned off (no survivors table)",
    )
    parser.add_argument(
        "--core-variants",
        action="store_true",
        help="the policy table's shipped loop, its loops-alone and whole-file-fix twins and the "
        "published loop only (not every other policy and published variant)",
    )
    parser.add_argument(
        "--no-diet",
        action="store_true",
        help="skip the fix-prompt diet (the fix prompt without each context block)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    parser.add_argument(
        "--live", action="store_true", help="the live comparison (make bench-live; --live -h)"
    )
    parser.add_argument("--frozen", action="store_true", help=argparse.SUPPRESS)  # the child
    return parser


def main(argv: list[str] | None = None) -> int:
    """Freeze the sources and re-run inside the copy; there, run the suite."""
    argv = sys.argv[1:] if argv is None else argv
    if "--live" in argv:  # the live comparison: real providers, real money, a hard cap
        from bench.live import main as live

        return live(argv)
    args = _parser().parse_args(argv)
    if args.frozen:
        return _run(args)
    scratch = Path(tempfile.mkdtemp(prefix="harness-bench-src-"))
    try:
        return run_frozen([*argv, "--out", str(args.out.resolve())], scratch)
    finally:
        _clean(scratch, args.keep)


def _run(args: argparse.Namespace) -> int:
    settings = Settings(
        tasks=args.tasks,
        seeds=tuple(range(args.seeds)),
        latency_scale=args.latency_scale or None,
        big_list=args.big_list,
        policies_only=args.policies_only,
        sensitivity_seeds=tuple(range(args.sensitivity_seeds)),
        isolation_rounds=args.isolation_rounds,
        sweep_choices=not args.no_sweep_choices,
        extra_variants=not args.core_variants,
        published_variants=not args.core_variants,
        diet=not args.no_diet,
    )
    configure_logging(None, level="error")  # the runs' own events still go to their files
    scratch = Path(tempfile.mkdtemp(prefix="harness-bench-"))
    ram = Path(tempfile.mkdtemp(prefix="harness-bench-", dir=_ram_disk()))
    os.environ["XDG_STATE_HOME"] = str(scratch / "state")  # a private day ledger
    try:
        results = run_suite(settings, ram, timed_dir=scratch)
    finally:
        _clean(scratch, args.keep)
        _clean(ram, args.keep)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    table = render(results)
    args.out.with_suffix(".md").write_text(table)
    print(table)
    print(f"results: {args.out} (and .md); took {results['duration_s']:.0f} s", file=sys.stderr)
    return 0 if all(v is not False for v in results["checks"].values()) else 1


def _ram_disk() -> str | None:
    """Where the untimed nights write: a RAM disk if the machine has one (their fsyncs cost
    time that no figure of theirs measures), else the default temporary folder."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) else None


def _clean(scratch: Path, keep: bool) -> None:
    if keep:
        print(f"kept {scratch}", file=sys.stderr)
    else:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
