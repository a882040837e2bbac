"""The JavaScript boundary stage of `make bench`: tasks/js_example's three tasks, their
solutions as candidates, one sandboxed `run_tests` call per task behind the boundary (the
default) and with the candidate in the test process (`isolation: in_process`), against plain
`node --test` on a plain copy of the same files.

Side by side: each task is run the three ways back to back (the order rotating from task to
task and round to round), so the runs a ratio compares are seconds apart, under the same load.
A round is the three tasks; a ratio is the median of the per-round ratios with a 90% bootstrap
interval. Where the machine can count it (root, a cgroup-v1 cpuacct hierarchy of its own, which
changes no scheduling) the CPU time of every process of each run is measured too: on a shared
machine the wall-clock ratio moves with the load, the CPU ratio much less. No assertion and no
threshold in tests: the target (boundary <= 1.5x plain `node --test`, wall clock) is reported
as met or not, with the margin. By hand:

    .venv/bin/python -m bench.bench_jsboundary [--rounds 7] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import structlog

from bench.bench_isolation import _interval, _load
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


def plain_node(task: TaskSpec, root: Path) -> None:
    """`node --test` with the JUnit reporter on the task's test files, in an environment as
    bare as the sandbox's (node reads some variables at start-up, such as NODE_EXTRA_CA_CERTS,
    which the sandbox does not pass on)."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"}
    tests = [str(t.relative_to(task.base_dir)) for t in task.tests]
    argv = ["node", "--test", "--test-reporter=junit", "--test-reporter-destination=/dev/null"]
    done = subprocess.run([*argv, *tests], cwd=root, env=env, capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"plain node --test failed on {task.id}: {done.stdout[-500:]!r}")


def sandboxed(task: TaskSpec, mode: str) -> None:
    """One `run_tests` call, as a night makes it."""
    assert task.solution is not None
    code = task.solution.read_text()
    result = run_tests(replace(task, isolation=mode), code, limits=TestLimits())
    if not result.all_passed:
        raise RuntimeError(f"{mode} on {task.id}: {result.passed}/{result.total} passed")


_CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def _cpuacct_alone() -> bool:
    """cgroup v1's cpuacct mounted in a hierarchy of its own (not with cpu, where a group of
    our own would change how the scheduler shares the machine)."""
    try:
        rows = [line.split() for line in Path("/proc/cgroups").read_text().splitlines()[1:]]
    except OSError:
        return False
    hierarchy = {row[0]: row[1] for row in rows if len(row) >= 2}
    acct = hierarchy.get("cpuacct", "0")
    return acct != "0" and hierarchy.get("cpu") != acct and (_CPUACCT / "cgroup.procs").exists()


@contextlib.contextmanager
def cpu_meter() -> Iterator[Callable[[], float] | None]:
    """The CPU seconds used so far by this process and every process it starts (however they
    detach or are reaped: a cpuacct group counts its members), or None where it cannot count."""
    group = _CPUACCT / f"harness-bench-{secrets.token_hex(4)}"
    if os.geteuid() != 0 or not _cpuacct_alone():
        yield None
        return
    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        with contextlib.suppress(OSError):
            group.rmdir()
        yield None
        return
    try:
        yield lambda: int((group / "cpuacct.usage").read_text()) / 1e9
    finally:
        with contextlib.suppress(OSError):
            (_CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
        for _ in range(50):  # the last killed processes leave the group as they are reaped
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.1)


def _side_by_side(
    tasks: list[TaskSpec],
    rounds: int,
    runs: dict[str, Callable[[TaskSpec], None]],
    cpu: Callable[[], float] | None,
) -> tuple[dict[str, list[float]], dict[str, list[float]] | None]:
    """Per mode and round, the wall and CPU seconds of the round's tasks; each task run the
    three ways back to back, the order rotating; one untimed warm-up round first."""
    names = list(runs)
    for task in tasks:
        for name in names:
            runs[name](task)
    wall: dict[str, list[float]] = {name: [] for name in names}
    used: dict[str, list[float]] = {name: [] for name in names}
    turn = 0
    for _ in range(rounds):
        for name in names:
            wall[name].append(0.0)
            used[name].append(0.0)
        for task in tasks:
            order = names[turn % len(names) :] + names[: turn % len(names)]
            turn += 1
            for name in order:
                cpu_before = cpu() if cpu else 0.0
                started = time.perf_counter()
                runs[name](task)
                wall[name][-1] += time.perf_counter() - started
                used[name][-1] += (cpu() if cpu else 0.0) - cpu_before
    return wall, (used if cpu else None)


def _ratios(times: dict[str, list[float]], rng: random.Random) -> dict[str, dict]:
    return {
        mode: _interval([t / p for t, p in zip(times[mode], times["plain"], strict=True)], rng)
        for mode in MODES[1:]
    }


def measure_js_boundary(rounds: int, folder: Path, note: Callable[[str], None]) -> dict[str, Any]:
    """The stage's results document: the wall (and, where countable, CPU) seconds of each mode
    per round (the three tasks), each sandboxed mode's ratio to plain `node --test`, and the
    target, met or not."""
    rng = random.Random(0)
    tasks = load_tasks(EXAMPLE / "tasks.yaml")
    root = _copy(tasks, folder)
    load_before = _load()
    runs: dict[str, Callable[[TaskSpec], None]] = {"plain": lambda t: plain_node(t, root)}
    for mode in MODES[1:]:
        runs[mode] = lambda t, m=mode: sandboxed(t, m)
    with cpu_meter() as cpu:
        times, used = _side_by_side(tasks, rounds, runs, cpu)
    note("js boundary bench: measured")
    ratios = _ratios(times, rng)
    measured = ratios["boundary"]["median"]
    kind = sandbox_kind()
    return {
        "command": f"python -m bench.bench_jsboundary --rounds {rounds}",
        "rounds": rounds,
        "pairing": "per task: the three ways back to back, the order rotating",
        "sandbox": kind,
        "boundary_in_effect": kind == "bwrap",
        "load_average": [load_before, _load()],
        "suite": f"tasks/js_example: {len(tasks)} tasks, "
        f"{sum(len(t.tests) for t in tasks)} test files",
        "seconds": {mode: _interval(times[mode], rng) for mode in MODES},
        "ratio_to_plain": ratios,
        "cpu_seconds": None if used is None else {m: _interval(used[m], rng) for m in MODES},
        "cpu_ratio_to_plain": None if used is None else _ratios(used, rng),
        "raw_seconds": times,
        "raw_cpu_seconds": used,
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
