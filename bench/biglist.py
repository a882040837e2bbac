"""A 1,000-task list: validation time, summary time and peak RSS, each in a fresh process.

`python -m bench.biglist MODE TASKS_YAML COUNT` runs one measurement and prints one JSON line;
the suite calls it through `measure`. The baseline modes do what a script without the
harness's checks would: parse the YAML and stat the paths; dump the results as JSON.
Each measurement also reports `cpu_seconds`: the whole process's CPU time (interpreter start,
imports and the work), which is what `time harness tasks validate` shows.

`python -m bench.biglist` alone measures what issue 13 asks for: a 1,000-task list validated
(target: under 1 CPU-second) and a 50 MB task list refused (by its size, before it is read).
Figures are printed, never asserted.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

__all__ = ["MODES", "measure"]

MODES = ("validate", "validate_plain", "summary", "summary_plain")
REFUSE = "refuse"  # not a suite mode: an over-size list, refused
CPU_TARGET_S = 1.0  # issue 13: 1,000 tasks validate in under 1 CPU-second
ATTEMPTS = 4  # per task in the synthetic results a summary is written from


def _validate(tasks_yaml: Path) -> int:
    from harness.runner import load_task_list

    return len(load_task_list(tasks_yaml))


def _refuse(tasks_yaml: Path) -> int:
    from harness.errors import BadInput
    from harness.runner import load_task_list

    try:
        load_task_list(tasks_yaml)
    except BadInput:
        return 0
    raise SystemExit(f"bench: {tasks_yaml} was accepted; it should be refused by its size")


def _validate_plain(tasks_yaml: Path) -> int:
    import yaml

    tasks = yaml.safe_load(tasks_yaml.read_text())["tasks"]
    base = tasks_yaml.parent
    for task in tasks:
        for key in ("reference", "tests", "solution"):
            values = task.get(key) or []
            for rel in [values] if isinstance(values, str) else values:
                (base / rel).stat()
    return len(tasks)


def _results(count: int) -> list[Any]:
    """Deterministic, plausible TaskResults: ATTEMPTS attempts each, a random walk of passes."""
    from harness.results import AttemptRecord, TaskResult, TaskStatus

    rng, out = random.Random(0), []
    for i in range(count):
        total, passed = rng.randint(15, 30), 0
        attempts = []
        for n in range(1, ATTEMPTS + 1):
            passed = max(0, min(total, passed + rng.randint(-3, 8)))
            attempts.append(
                AttemptRecord(
                    n=n,
                    kind="write" if n == 1 else "fix",
                    passed=passed,
                    failed=total - passed,
                    total=total,
                    cost_usd=Decimal("0.031"),
                    tier="mid",
                )
            )
        best = max(attempts, key=lambda a: a.passed)
        status = TaskStatus.PASSED if best.passed == total else TaskStatus.PARTIAL
        out.append(
            TaskResult(
                id=f"task_{i:04d}",
                status=status,
                reason="" if best.passed == total else "4 attempts used",
                best_attempt=best.n,
                passed=best.passed,
                failed=best.failed,
                total=total,
                cost_usd=Decimal("0.124"),
                output=f"/tmp/out/task_{i:04d}.py",
                attempts=tuple(attempts),
            )
        )
    return out


def _summary(count: int, folder: Path) -> int:
    import datetime as dt

    from harness.report import RunSummary, load_summary, render_markdown, write_summary
    from harness.results import RunStatus

    tasks = tuple(_results(count))
    now = dt.datetime.now().astimezone()
    summary = RunSummary(
        "bench",
        now,
        now,
        RunStatus.COMPLETED,
        "sim",
        Decimal(30),
        sum((t.cost_usd for t in tasks), Decimal(0)),
        tasks,
    )
    write_summary(folder, summary)  # summary.json, .md, .html: what a run writes at its end
    render_markdown(load_summary(folder))  # what `harness summary` prints in the morning
    return count


def _summary_plain(count: int, folder: Path) -> int:
    tasks = [t.to_json() for t in _results(count)]
    (folder / "summary.json").write_text(json.dumps({"tasks": tasks}))
    return count


def _run(mode: str, tasks_yaml: Path, count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        started, cpu = time.perf_counter(), time.process_time()
        if mode == "validate":
            n = _validate(tasks_yaml)
        elif mode == REFUSE:
            n = _refuse(tasks_yaml)
        elif mode == "validate_plain":
            n = _validate_plain(tasks_yaml)
        elif mode == "summary":
            n = _summary(count, Path(tmp))
        else:
            n = _summary_plain(count, Path(tmp))
        seconds, work_cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "mode": mode,
        "tasks": n,
        "seconds": seconds,
        "work_cpu_seconds": work_cpu,
        "cpu_seconds": time.process_time(),  # the process so far: start-up, imports, work
        **_peak_rss(),
    }


def _peak_rss() -> dict[str, float | None]:
    """Peak RSS in MiB. ru_maxrss (KiB on Linux) survives fork+exec: a child started by a
    big parent reports the parent's size. VmHWM belongs to this process image alone, so it
    is the figure; ru_maxrss is kept beside it for the record."""
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
        hwm = next(int(line.split()[1]) / 1024 for line in lines if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        hwm = None
    return {"peak_rss_mib": hwm if hwm is not None else maxrss, "ru_maxrss_mib": maxrss}


def measure(mode: str, tasks_yaml: Path, count: int) -> dict[str, Any]:
    """One measurement in a fresh interpreter, so peak RSS is that mode's alone."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.biglist", mode, str(tasks_yaml), str(count)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fifty_mb(tasks_yaml: Path, target: Path) -> Path:
    """A real 50 MB task list: the 1,000-task list's entries, repeated."""
    head, entries = tasks_yaml.read_text().split("\n", 1)
    with open(target, "w") as out:
        out.write(head + "\n")
        while out.tell() < 50 * 2**20:
            out.write(entries)
    return target


def issue_13(count: int = 1000) -> dict[str, Any]:
    """Validate a `count`-task list and refuse a 50 MB one, each in a fresh process."""
    from bench.workspace import make_workspace

    with tempfile.TemporaryDirectory() as tmp:
        ws = make_workspace(Path(tmp) / "big", count)
        validate = measure("validate", ws.tasks_yaml, count)
        big = _fifty_mb(ws.tasks_yaml, Path(tmp) / "big" / "fifty_mb.yaml")
        refuse = measure(REFUSE, big, 0) | {"bytes": big.stat().st_size}
    return {"validate": validate, "refuse": refuse}


def _report(found: dict[str, Any]) -> str:
    v, r = found["validate"], found["refuse"]
    verdict = "under" if v["cpu_seconds"] < CPU_TARGET_S else "OVER"
    return "\n".join(
        [
            f"validate {v['tasks']} tasks: {v['cpu_seconds']:.2f} CPU-s for the whole process "
            f"({v['work_cpu_seconds']:.2f} importing and validating), {v['seconds']:.2f} s wall, "
            f"{v['peak_rss_mib']:.0f} MiB peak: {verdict} the {CPU_TARGET_S:g} CPU-s target",
            f"refuse a {r['bytes'] / 2**20:.0f} MB list: {r['seconds'] * 1000:.1f} ms wall, "
            f"{r['cpu_seconds']:.2f} CPU-s for the whole process, {r['peak_rss_mib']:.0f} MiB peak",
        ]
    )


if __name__ == "__main__":
    if len(sys.argv) == 1:
        found = issue_13()
        print(_report(found))
        print(json.dumps(found))
    else:
        print(json.dumps(_run(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]))))
