"""Benchmark: per-run overhead of harness.testrun.run_tests against plain `python -m pytest`.

Runs the same acceptance tests against the same candidate both ways, several times, and
reports median wall-clock times and their ratio, for a tiny task (3 tests) and a wider one
(many tests), so fixed start-up cost and per-test cost can be told apart. No assertions:
this is a measurement, run by hand or by `make bench`:

    .venv/bin/python bench/bench_sandbox.py [--runs 10] [--tests 200]
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
from collections.abc import Callable
from pathlib import Path

import structlog

from harness.tasks import TaskSpec
from harness.testrun import TestLimits, run_tests, sandbox_kind

ROOT = Path(__file__).resolve().parent.parent
CALC = ROOT / "tests" / "hostile" / "task"
GOOD = (ROOT / "tests" / "hostile" / "good_calc.py").read_text()


def wide_task(folder: Path, count: int) -> TaskSpec:
    """A task with `count` small parametrised-free tests (real functions, real asserts)."""
    body = "".join(
        f"\n\ndef test_add_{i}():\n    assert calc.add({i}, 1) == {i + 1}\n" for i in range(count)
    )
    (folder / "acceptance").mkdir(parents=True)
    (folder / "acceptance" / "test_wide.py").write_text("import calc\n" + body)
    return TaskSpec(
        id=f"bench-wide-{count}",
        base_dir=folder,
        reference=(),
        tests=(folder / "acceptance" / "test_wide.py",),
        output=folder / "out/calc.py",
    )


def plain_pytest(task: TaskSpec, code: str) -> float:
    """Seconds for `python -m pytest` on a plain copy, candidate importable, no sandbox."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for test in task.tests:
            target = root / test.relative_to(task.base_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(test, target)
        candidate = root / task.output_rel
        candidate.parent.mkdir(parents=True, exist_ok=True)
        candidate.write_text(code)
        args = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(root),
            *(str(t.relative_to(task.base_dir)) for t in task.tests),
        ]
        started = time.perf_counter()
        subprocess.run(
            args,
            cwd=root,
            capture_output=True,
            check=False,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": str(candidate.parent),
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            },
        )  # as in the sandbox
        return time.perf_counter() - started


def sandboxed(task: TaskSpec, code: str, mode: str) -> float:
    started = time.perf_counter()
    result = run_tests(task, code, limits=TestLimits(sandbox=mode))  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    if not result.all_passed:
        raise SystemExit(f"benchmark candidate failed under {mode}: {result.error}")
    return elapsed


def medians(runs: int, measures: dict[str, Callable[[], float]]) -> dict[str, float]:
    """Median seconds of each measure, interleaved run by run so load swings hit all alike."""
    for measure in measures.values():
        measure()  # warm-up: file caches, and the one-off pristine collection of the task
    times: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(runs):
        for name, measure in measures.items():
            times[name].append(measure())
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--tests", type=int, default=200)
    options = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    modes = ["none", *(["auto"] if sandbox_kind() == "bwrap" else [])]
    with tempfile.TemporaryDirectory() as tmp:
        calc = TaskSpec(
            id="bench-calc",
            base_dir=CALC,
            reference=(),
            tests=(CALC / "acceptance" / "test_calc.py",),
            output=CALC / "out/calc.py",
        )
        tasks = {"3 tests": calc, f"{options.tests} tests": wide_task(Path(tmp), options.tests)}
        print(f"median of {options.runs} runs, seconds (ratio to plain pytest)")
        for label, task in tasks.items():
            measures = {"plain": lambda t=task: plain_pytest(t, GOOD)}
            for mode in modes:
                name = "bwrap" if mode == "auto" else "rlimits"
                measures[name] = lambda t=task, m=mode: sandboxed(t, GOOD, m)
            took = medians(options.runs, measures)
            cells = [
                f"{name} {secs:.3f} ({secs / took['plain']:.2f}x)" for name, secs in took.items()
            ]
            print(f"{label:>10}: " + "   ".join(cells))


if __name__ == "__main__":
    main()
