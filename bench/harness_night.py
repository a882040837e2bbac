"""Run this harness, assembled as `harness run --provider sim` assembles it, with probes."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from bench.batch import first_write_savings
from bench.instrument import Probe, TimedProvider, timed_tests
from bench.memo import Memo
from bench.model import Night, TaskOutcome
from harness.prompts import PromptSet
from harness.results import RunStatus, TaskResult
from harness.runner import RunArgs, check_inputs, execute, open_run
from harness.sim import SimLatency, SimModel, SimProvider

__all__ = ["run_harness"]


def _args(
    tasks_yaml: Path,
    run_dir: Path,
    seed: int,
    concurrency: int,
    cap_usd: float,
    config: Path | None,
    provider: str = "sim",
) -> RunArgs:
    """The RunArgs `harness run` would build from its command line."""
    return RunArgs(
        tasks=tasks_yaml,
        provider=provider,
        budget_usd=cap_usd,
        run_dir=run_dir,
        concurrency=concurrency,
        only=None,
        resume=None,
        rerun=False,
        config=config,
        policy=None,
        seed=seed,
        log_level="error",
    )


def _no_prefetch(spec: object) -> None:
    return None


def _shipped_passed(task: TaskResult, attempts_dir: Path) -> int:
    """Pass count of the attempt whose file is byte-for-byte the shipped output: checked from
    the files, not taken from the summary's claim."""
    if task.output is None:
        return 0
    shipped = Path(task.output).read_text()
    matches = [
        a.passed
        for a in task.attempts
        if (f := attempts_dir / task.id / f"{a.n}.py").is_file() and f.read_text() == shipped
    ]
    return max(matches, default=-1)  # -1: shipped code that no attempt produced (a bug)


def _outcome(task: TaskResult, probe: Probe, attempts_dir: Path) -> TaskOutcome:
    scored = [a for a in task.attempts if a.extraction_error is None]
    tally = probe.of(task.id)
    return TaskOutcome(
        id=task.id,
        total=max((a.total for a in scored), default=task.total),
        best_passed=max((a.passed for a in scored), default=0),
        shipped_passed=_shipped_passed(task, attempts_dir),
        cost_usd=float(task.cost_usd),
        attempts=len(task.attempts),
        calls=tally.calls,
        provider_s=tally.provider_s,
        latency_s=tally.latency_s,
        test_s=tally.test_s,
        test_runs=tally.test_runs,
        tokens=tally.tokens,
        status=task.status.value,
        bill=tuple(tally.bill),
    )


def run_harness(
    tasks_yaml: Path,
    run_dir: Path,
    *,
    seed: int,
    concurrency: int,
    latency: SimLatency | None = None,
    latency_scale: float | None = None,
    cap_usd: float = 1000.0,
    config: Path | None = None,
    variant: str = "harness",
    live: bool = False,
    memo: Memo | None = None,
    reuse: bool = False,
    model: SimModel | None = None,
    prompts_root: Path | None = None,
) -> Night:
    """One night of this harness: check_inputs → open_run → execute, the provider and the
    test runner wrapped in probes. The clock covers open_run to close (not validation).
    `live`: the providers `harness run --provider live` builds (keys from the environment),
    under `cap_usd` as the run's hard cap; else the simulator. `memo`: test results this
    bench run measured (bench/memo.py): the night adds its own, and with `reuse` (never for
    a night whose wall time is measured) takes those it finds instead of running the tests.
    `model`: the simulator's behaviour model (None: the shipped sim_model.yaml).
    `prompts_root`: templates other than the shipped prompts/ (bench/diet.py)."""
    args = _args(tasks_yaml, run_dir, seed, concurrency, cap_usd, config, "live" if live else "sim")
    inputs = check_inputs(args)
    if prompts_root is not None:
        inputs = replace(inputs, prompts={t: PromptSet(prompts_root, t) for t in inputs.prompts})
    probe = Probe()
    if live:
        providers = inputs.providers
    else:
        providers = {
            "sim": SimProvider(
                {s.id: s for s in inputs.specs}, seed=seed, latency=latency, model=model
            )
        }
    timed = {name: TimedProvider(p, probe) for name, p in providers.items()}
    inputs = replace(inputs, providers=timed)
    started = time.perf_counter()
    run = open_run(args, inputs)
    env = run.parts.env
    run_tests = memo.wrap(env.run_tests, reuse) if memo else env.run_tests
    env = replace(env, run_tests=timed_tests(run_tests, probe))
    if memo and reuse:
        # expect_tests only collects the pristine test ids early, beside the first model call
        # (a test run collects them itself when it needs them); in a fresh workspace copy it
        # is a sandbox launch per task, which a night taking remembered results never needs.
        env = replace(env, expect_tests=_no_prefetch)
    run = replace(run, parts=replace(run.parts, env=env))
    try:
        summary = execute(run)
    finally:
        run.closing.close()
    wall = time.perf_counter() - started
    attempts_dir = run.parts.rundir.root / "attempts"
    saved = first_write_savings(run_dir / "harness.db", run.parts.rundir.run_id, inputs.prices)
    outcomes = tuple(
        replace(_outcome(t, probe, attempts_dir), batch_saving_usd=saved.get(t.id, 0.0))
        for t in summary.tasks
    )
    return Night(
        variant,
        seed,
        concurrency,
        latency_scale,
        wall,
        float(summary.spent_usd),
        cap_usd,
        outcomes,
        stopped=summary.status is RunStatus.BUDGET_STOPPED,
    )
