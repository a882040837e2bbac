"""The JavaScript boundary stage of `make bench`: tasks/js_example's three tasks, their
solutions as candidates, one sandboxed `run_tests` call per task behind the boundary (the
default) and with the candidate in the test process (`isolation: in_process`), against plain
`node --test` on a plain copy of the same files. A round is the three tasks; rounds are
interleaved (the order rotating) and a ratio is the median of the per-round ratios with a
bootstrap interval. No assertion and no threshold in tests: the target (boundary <= 1.5x plain
`node --test`) is reported as met or not, with the margin. By hand:

    .venv/bin/python -m bench.bench_jsboundary [--rounds 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import structlog

from bench.bench_isolation import _interval, _load, _rounds
from harness.tasks import TaskSpec, load_tasks
from harness.testrun import TestLimits, run_tests, sandbox_kind

__all__ = ["MODES", "measure_js_boundary"]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tasks" / "js_example"
MODES = ("plain", "in_process", "boundary")
TARGET_RATIO = 1.5  # boundary / plain `node --test` on the example (issue 37)


def _copy(tasks: list[TaskSpec], folder: Path) -> Path:
    """A plain copy of the example with each solution at its task's output place."""
    root = folder / "js_example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("_solutions", "runs"))
    for task in tasks:
        assert task.solution is not None
        target = root / task.output.relative_to(task.base_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task.solution, target)
    return root


def plain_node(tasks: list[TaskSpec], root: Path) -> float:
    """Seconds for `node --test` with the JUnit reporter, once per task on its test files, in
    an environment as bare as the sandbox's (node reads some variables at start-up, such as
    NODE_EXTRA_CA_CERTS, which the sandbox does not pass on)."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"}
    started = time.perf_counter()
    for task in tasks:
        tests = [str(t.relative_to(task.base_dir)) for t in task.tests]
        argv = ["node", "--test", "--test-reporter=junit", "--test-reporter-destination=/dev/null"]
        done = subprocess.run([*argv, *tests], cwd=root, env=env, capture_output=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"plain node --test failed on {task.id}: {done.stdout[-500:]!r}")
    return time.perf_counter() - started


def sandboxed(tasks: list[TaskSpec], mode: str) -> float:
    """Seconds for one `run_tests` call per task, as a night makes them."""
    started = time.perf_counter()
    for task in tasks:
        assert task.solution is not None
        code = task.solution.read_text()
        result = run_tests(replace(task, isolation=mode), code, limits=TestLimits())
        if not result.all_passed:
            raise RuntimeError(f"{mode} on {task.id}: {result.passed}/{result.total} passed")
    return time.perf_counter() - started


def measure_js_boundary(rounds: int, folder: Path, note: Callable[[str], None]) -> dict[str, Any]:
    """The stage's results document: the seconds of each mode per round (the three tasks), each
    sandboxed mode's ratio to plain `node --test`, and the target, met or not."""
    rng = random.Random(0)
    tasks = load_tasks(EXAMPLE / "tasks.yaml")
    root = _copy(tasks, folder)
    load_before = _load()
    measures: dict[str, Callable[[], float]] = {"plain": lambda: plain_node(tasks, root)}
    for mode in MODES[1:]:
        measures[mode] = lambda m=mode: sandboxed(tasks, m)
    times = _rounds(rounds, measures)
    note("js boundary bench: measured")
    ratios = {
        mode: _interval([t / p for t, p in zip(times[mode], times["plain"], strict=True)], rng)
        for mode in MODES[1:]
    }
    measured = ratios["boundary"]["median"]
    kind = sandbox_kind()
    return {
        "command": f"python -m bench.bench_jsboundary --rounds {rounds}",
        "rounds": rounds,
        "sandbox": kind,
        "boundary_in_effect": kind == "bwrap",
        "load_average": [load_before, _load()],
        "suite": f"tasks/js_example: {len(tasks)} tasks, "
        f"{sum(len(t.tests) for t in tasks)} test files",
        "seconds": {mode: _interval(times[mode], rng) for mode in MODES},
        "ratio_to_plain": ratios,
        "raw_seconds": times,
        "target": {
            "target": TARGET_RATIO,
            "measured": measured,
            "met": None if measured is None else measured <= TARGET_RATIO,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="the results document, not a table")
    options = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory() as tmp:
        results = measure_js_boundary(options.rounds, Path(tmp), lambda s: None)
    if options.json:
        print(json.dumps(results, indent=1))
        return
    from bench.render_runner import render_js_boundary

    print("\n".join(render_js_boundary(results)))


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    main()
