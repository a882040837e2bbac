"""Measurement: one sandboxed run of tasks/example's orders task, in_process vs boundary,
against plain `python -m pytest` on the same tests and solution. No assertions; by hand:

    .venv/bin/python bench/bench_isolation.py [--runs 5] [--task orders]

Each sandboxed run is timed after the task's pristine collection (done once per mode,
before timing), so the numbers are one `run_tests` call as a night makes it.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import structlog

from harness.tasks import load_tasks
from harness.testrun import TestLimits, expect_tests, run_tests

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tasks" / "example"


def plain_pytest(test: Path, solution: Path) -> float:
    """Plain pytest in a copy of the example folder with the solution at the output place."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "example"
        shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("out", "runs"))
        (work / "out").mkdir()
        shutil.copy(solution, work / "out" / solution.name)
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        argv += [str(work / test.relative_to(EXAMPLE))]
        started = time.monotonic()
        subprocess.run(argv, cwd=work, env={"PYTHONPATH": str(work / "out")}, check=False,
                       capture_output=True)  # fmt: skip
        return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--task", default="orders")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    (task,) = [t for t in load_tasks(EXAMPLE / "tasks.yaml") if t.id == args.task]
    code, limits = task.solution.read_text(), TestLimits()
    times: dict[str, list[float]] = {"plain pytest": [], "in_process": [], "boundary": []}
    for mode in ("in_process", "boundary"):
        expect_tests(replace(task, isolation=mode), limits)
    for _ in range(args.runs):
        times["plain pytest"].append(plain_pytest(task.tests[0], task.solution))
        for mode in ("in_process", "boundary"):
            started = time.monotonic()
            result = run_tests(replace(task, isolation=mode), code, limits=limits)
            times[mode].append(time.monotonic() - started)
            if not result.all_passed:
                print(f"{mode}: not every test passed ({result.passed}/{result.total})")
    base = statistics.median(times["plain pytest"])
    print(f"task {args.task}, {args.runs} runs, median wall-clock seconds")
    for name, values in times.items():
        median = statistics.median(values)
        each = " ".join(f"{v:.2f}" for v in values)
        print(f"  {name:13s} {median:6.2f} s  ({median / base:4.2f}x plain)  runs: {each}")


if __name__ == "__main__":
    main()
