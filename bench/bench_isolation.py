"""The isolation stage of `make bench`: one sandboxed `run_tests` call per isolation mode
(`boundary`, `in_process`) against plain `python -m pytest` on the same tests and candidate,
at 3, 27 and 100 tests. Rounds are interleaved (each measure once per round, the order
rotating) so load swings hit every measure alike; a ratio is the median of the per-round
ratios with a bootstrap interval. No assertions and no thresholds in tests: the targets
(boundary <= 1.5x plain on the example task; per-test overhead <= 10% at 100 tests) are
reported as met or not, with the margin. By hand:

    .venv/bin/python -m bench.bench_isolation [--rounds 7] [--json]

Sizes: 3 and 100 are one generated suite (a test per `calc.add` case) at two lengths, so the
difference between them is the per-test cost; 27 is tasks/example's `orders` task (fixtures,
a conftest.py, support objects crossing the boundary as handles).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import structlog

from harness.tasks import TaskSpec, load_tasks
from harness.testrun import TestLimits, run_tests, sandbox_kind
from harness.testrun.scratch import candidate_place, read_pristine

__all__ = ["MODES", "SIZES", "measure_isolation"]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tasks" / "example"
MODES = ("plain", "in_process", "boundary")
SIZES = (3, 27, 100)
TARGET_RATIO = 1.5  # boundary / plain pytest on the example task (issue 27)
TARGET_PER_TEST = 0.10  # boundary's extra cost per test over plain pytest's, at 100 tests
_GOOD_CALC = "def add(a, b):\n    return a + b\n"
_RESAMPLES = 2000


@dataclass(frozen=True)
class Case:
    """One suite measured: the task, a candidate that passes it, and a label."""

    label: str
    tests: int
    task: TaskSpec
    code: str


def _wide(folder: Path, count: int) -> Case:
    """`count` one-assert tests of `calc.add`, no fixtures: start-up and per-test cost only."""
    body = "".join(
        f"\n\ndef test_add_{i}():\n    assert calc.add({i}, 1) == {i + 1}\n" for i in range(count)
    )
    (folder / "acceptance").mkdir(parents=True)
    (folder / "acceptance" / "test_wide.py").write_text("import calc\n" + body)
    task = TaskSpec(
        id=f"bench-wide-{count}",
        base_dir=folder,
        reference=(),
        tests=(folder / "acceptance" / "test_wide.py",),
        output=folder / "out/calc.py",
    )
    return Case(f"generated, {count} tests", count, task, _GOOD_CALC)


def _example() -> Case:
    (task,) = [t for t in load_tasks(EXAMPLE / "tasks.yaml") if t.id == "orders"]
    assert task.solution is not None
    return Case("tasks/example orders", 27, task, task.solution.read_text())


def cases(folder: Path) -> list[Case]:
    """The three suites, smallest first."""
    return [_wide(folder / "w3", 3), _example(), _wide(folder / "w100", 100)]


def plain_pytest(case: Case) -> float:
    """Seconds for `python -m pytest` on a plain copy of the files the sandbox gets (tests,
    support, the candidate at its place), with the plugin set and sys.path the sandbox uses."""
    pristine = read_pristine(case.task)
    place = candidate_place(case.task, pristine)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, data in (*pristine.files, (place, case.code.encode())):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        argv = [sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        argv += ["--rootdir", str(root), *pristine.tests]
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": f"{(root / place).parent}:{root}",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONHASHSEED": "0",
        }
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=root, capture_output=True, check=False, env=env)
        elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"plain pytest failed on {case.label}: {done.stdout[-500:]!r}")
    return elapsed


def sandboxed(case: Case, mode: str) -> float:
    """Seconds for one `run_tests` call as a night makes it (the pristine collection is
    cached by the warm-up round, as it is after a task's first attempt)."""
    task = replace(case.task, isolation=mode)
    started = time.perf_counter()
    result = run_tests(task, case.code, limits=TestLimits())
    elapsed = time.perf_counter() - started
    if not result.all_passed:
        raise RuntimeError(f"{mode} on {case.label}: {result.passed}/{result.total} passed")
    return elapsed


def _interval(values: list[float], rng: random.Random) -> dict[str, float]:
    """Median and a 90% percentile-bootstrap interval of the median."""
    return _bootstrap(len(values), lambda pick: statistics.median(values[i] for i in pick), rng)


def _bootstrap(
    n: int, statistic: Callable[[list[int]], float], rng: random.Random
) -> dict[str, float]:
    """`statistic` over all n rounds, and its 90% percentile-bootstrap interval (rounds drawn
    with replacement, so paired measures stay paired)."""
    whole = statistic(list(range(n)))
    draws = sorted(
        d
        for d in (statistic(rng.choices(range(n), k=n)) for _ in range(_RESAMPLES))
        if not math.isnan(d)  # a resample where the statistic is undefined (x / 0)
    )
    if math.isnan(whole) or len(draws) < _RESAMPLES // 2:  # too noisy to say anything
        return {"median": None, "low": None, "high": None}
    low, high = draws[int(0.05 * len(draws))], draws[int(0.95 * len(draws)) - 1]
    return {"median": whole, "low": low, "high": high}


def _rounds(rounds: int, measures: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Each measure once per round after one untimed warm-up round; the order rotates."""
    names = list(measures)
    for name in names:
        measures[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for n in range(rounds):
        for name in names[n % len(names) :] + names[: n % len(names)]:
            times[name].append(measures[name]())
    return times


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def measure_isolation(rounds: int, folder: Path, note: Callable[[str], None]) -> dict[str, Any]:
    """The stage's results document: per size the seconds of each mode and each mode's ratio
    to plain pytest; the per-test cost from 3 to 100 tests; the targets, met or not."""
    rng = random.Random(0)
    kind = sandbox_kind()
    load_before = _load()
    raw: dict[int, dict[str, list[float]]] = {}
    rows = []
    for case in cases(folder):
        measures: dict[str, Callable[[], float]] = {"plain": lambda c=case: plain_pytest(c)}
        for mode in MODES[1:]:
            measures[mode] = lambda c=case, m=mode: sandboxed(c, m)
        times = raw[case.tests] = _rounds(rounds, measures)
        note(f"isolation bench: {case.label} measured")
        ratios = {
            mode: _interval([t / p for t, p in zip(times[mode], times["plain"], strict=True)], rng)
            for mode in MODES[1:]
        }
        seconds = {mode: _interval(times[mode], rng) for mode in MODES}
        row = {"label": case.label, "tests": case.tests, "seconds": seconds}
        rows.append({**row, "ratio_to_plain": ratios, "raw_seconds": times})
    per_test = _per_test(raw, rng)
    example = next(r for r in rows if r["tests"] == 27)["ratio_to_plain"]["boundary"]
    wide = rows[-1]["ratio_to_plain"]["boundary"]
    return {
        "command": f"python -m bench.bench_isolation --rounds {rounds}",
        "rounds": rounds,
        "sandbox": kind,
        "boundary_in_effect": kind == "bwrap",
        "load_average": [load_before, _load()],
        "sizes": rows,
        "per_test": per_test,
        "targets": {
            "example_boundary_ratio": {
                "target": TARGET_RATIO,
                "measured": example["median"],
                "met": example["median"] <= TARGET_RATIO,
            },
            "per_test_overhead_at_100": {
                "target": TARGET_PER_TEST,
                "measured": per_test["overhead"]["boundary"]["median"],
                "met": _at_most(per_test["overhead"]["boundary"]["median"], TARGET_PER_TEST),
            },
            # The other reading of the target: the whole 100-test run, not one more test.
            "whole_run_overhead_at_100": {
                "target": TARGET_PER_TEST,
                "measured": wide["median"] - 1,
                "met": wide["median"] - 1 <= TARGET_PER_TEST,
            },
        },
    }


def _at_most(value: float | None, target: float) -> bool | None:
    return None if value is None else value <= target


def _per_test(raw: dict[int, dict[str, list[float]]], rng: random.Random) -> dict[str, Any]:
    """Per round, each measure's cost of one more test ((t100 - t3) / 97) in ms; each sandboxed
    mode's overhead per test is its median cost over plain pytest's, minus 1 (0.10 = 10% more),
    bootstrapped over rounds."""
    small, big = raw[SIZES[0]], raw[SIZES[-1]]
    extra = SIZES[-1] - SIZES[0]
    slopes = {
        m: [(b - s) / extra * 1000 for s, b in zip(small[m], big[m], strict=True)] for m in MODES
    }

    def over(mode: str) -> Callable[[list[int]], float]:
        def statistic(pick: list[int]) -> float:
            plain = statistics.median(slopes["plain"][i] for i in pick)
            mine = statistics.median(slopes[mode][i] for i in pick)
            return mine / plain - 1 if plain > 0 else float("nan")

        return statistic

    n = len(slopes["plain"])
    overhead = {m: _bootstrap(n, over(m), rng) for m in MODES[1:]}
    return {"ms": {m: _interval(v, rng) for m, v in slopes.items()}, "overhead": overhead}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="the results document, not a table")
    options = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory() as tmp:
        results = measure_isolation(options.rounds, Path(tmp), lambda s: None)
    if options.json:
        print(json.dumps(results, indent=1))
        return
    from bench.render_runner import render_isolation

    print("\n".join(render_isolation(results)))


if __name__ == "__main__":
    main()
