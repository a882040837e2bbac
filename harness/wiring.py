"""Start-up: turn CLI arguments into a checked, ready Run. Nothing is spent here."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import threading
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import structlog

from harness.budget import Budget, LedgerError, MemoryLedger
from harness.calls import Caller
from harness.commands import BadInput
from harness.config import ConfigError, HarnessConfig, check_prices, load_config
from harness.digest import inputs_digest
from harness.guardrails import Policy, PolicyError, load_policy
from harness.log import close_logging, configure_logging
from harness.metrics import render_metrics, write_metrics
from harness.pipeline import TaskEnv
from harness.pricing import PriceTable
from harness.prompts import PromptError, PromptSet, default_prompts_dir, known_types
from harness.router import Router
from harness.rundir import RunDir, new_run_id
from harness.runner import Run
from harness.store import RunInfo, Store
from harness.tasks import TaskListError, load_tasks
from harness.taskspec import TaskSpec

__all__ = ["Inputs", "check_inputs", "load_task_list", "open_run"]

log = structlog.get_logger()


def load_task_list(path: Path, prompts_root: Path | None = None) -> list[TaskSpec]:
    """Load and validate; every problem becomes one BadInput listing them all."""
    root = prompts_root or default_prompts_dir()
    try:
        return load_tasks(path, known_types=known_types(root))
    except TaskListError as exc:
        count = len(exc.problems)
        raise BadInput(f"{count} problem(s) in the task list; nothing ran:\n{exc}") from exc


@dataclass(frozen=True)
class Inputs:
    """Everything validated before the run directory is touched or anything is spent."""

    config: HarnessConfig
    prices: PriceTable
    specs: list[TaskSpec]
    prompts: dict[str, PromptSet]
    policy: Policy
    providers: dict[str, Any]


def _select(specs: list[TaskSpec], only: list[str] | None) -> list[TaskSpec]:
    if not only:
        return specs
    known = {s.id for s in specs}
    unknown = [i for i in only if i not in known]
    if unknown:
        raise BadInput(
            f"--only: no task with id {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return [s for s in specs if s.id in only]


def _providers(args: argparse.Namespace, config: HarnessConfig, specs: list[TaskSpec]) -> dict:
    if args.provider == "sim":
        from harness.providers.sim import SimProvider

        return {"sim": SimProvider({s.id: s for s in specs}, seed=args.seed)}
    from harness.providers import MissingKeyError, build_provider
    from harness.providers.retry import RetryPolicy

    names = sorted({r.provider for r in config.routes.values()})
    try:
        return {
            n: build_provider(n, RetryPolicy(), timeout_s=config.provider_timeout_s) for n in names
        }
    except MissingKeyError as exc:
        raise BadInput(str(exc)) from exc


def _policy(args: argparse.Namespace, specs: list[TaskSpec]) -> Policy:
    try:
        policy = load_policy(args.policy, task_list_dir=args.tasks.resolve().parent)
    except PolicyError as exc:
        raise BadInput(str(exc)) from exc
    problems = policy.check_outputs(specs)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise BadInput(f"task outputs outside the allowed write roots; nothing ran:\n{lines}")
    return policy


def check_inputs(args: argparse.Namespace) -> Inputs:
    """Validate config, prices, task list, prompts, policy and keys; raise BadInput (exit 2)."""
    try:
        config = load_config(args.config)
        prices = check_prices(config)
    except ConfigError as exc:
        raise BadInput(str(exc)) from exc
    if args.budget_usd is not None and args.budget_usd <= 0:
        raise BadInput(f"--budget-usd must be a positive amount of USD, not {args.budget_usd}")
    if args.concurrency is not None and args.concurrency < 1:
        raise BadInput(f"--concurrency must be at least 1, not {args.concurrency}")
    root = default_prompts_dir()
    specs = _select(load_task_list(args.tasks, root), args.only)
    try:
        prompts = {t: PromptSet(root, t) for t in {s.type for s in specs}}
    except PromptError as exc:
        raise BadInput(str(exc)) from exc
    policy = _policy(args, specs)
    return Inputs(config, prices, specs, prompts, policy, _providers(args, config, specs))


def _run_id(args: argparse.Namespace, store: Store) -> tuple[str, RunInfo | None]:
    """A new run id, or the one to resume with what it was started with."""
    if args.resume is None:
        return new_run_id(), None
    run_id = store.latest_run() if args.resume == "latest" else args.resume
    info = store.run_info(run_id) if run_id else None
    if info is None:
        raise BadInput(
            f"--resume: no run {args.resume!r} in {args.run_dir}; omit --resume to start anew"
        )
    if info.provider != args.provider:
        raise BadInput(f"--resume: run {run_id} used --provider {info.provider}; pass the same")
    return run_id, info


def _resumed(args: argparse.Namespace, inputs: Inputs, info: RunInfo) -> tuple[Inputs, Any]:
    """A resume keeps the run's own cap and task selection unless restated on the command."""
    if args.budget_usd is None and info.cap_usd is not None:
        args.budget_usd = info.cap_usd
    only = args.only if args.only is not None else info.args.get("only")
    return replace(inputs, specs=_select(inputs.specs, only)), only


def _budget(args: argparse.Namespace, inputs: Inputs, store: Store, run_id: str) -> Budget:
    """The run's caps; simulated spend never enters the machine's day ledger."""
    specs = inputs.specs
    try:
        return Budget.from_config(
            inputs.config.budget,
            budget_usd=Decimal(str(args.budget_usd)) if args.budget_usd is not None else None,
            ledger=MemoryLedger() if args.provider == "sim" else None,
            spent_run=store.spent(run_id),
            spent_tasks={s.id: store.spent(run_id, s.id) for s in specs},
        )
    except LedgerError as exc:
        raise BadInput(f"budget ledger: {exc}") from exc


class _CallLogs:
    """Tee finished calls to the run store first (what resume trusts), then the run folder."""

    def __init__(self, *logs: Any) -> None:
        self._logs = logs

    def record_call(self, request, completion, cost_usd) -> None:
        for call_log in self._logs:
            call_log.record_call(request, completion, cost_usd)


def _run_tests(inputs: Inputs):
    from harness.testrun import TestLimits, run_tests, sandbox_kind

    tests = inputs.config.tests
    limits = TestLimits(
        timeout_s=tests.timeout_s,
        per_test_timeout_s=tests.per_test_timeout_s,
        sandbox=tests.sandbox,
    )
    slots = threading.BoundedSemaphore(inputs.config.concurrency.tests or os.cpu_count() or 1)
    guard = inputs.policy.enforce_command

    def run(spec: TaskSpec, code: str):
        # The operator's code policy was already applied by the pipeline (a violation is a
        # `guardrail` stop, not a test result); the sandbox adds its own pre-check, and every
        # command it starts passes the operator's command policy first.
        with slots:
            return run_tests(spec, code, limits=limits, command_guard=guard)

    kind = sandbox_kind(limits)
    notes = (
        ()
        if kind == "bwrap"
        else (
            "tests ran without bubblewrap isolation (rlimits and a scrubbed environment only); "
            "install bubblewrap",
        )
    )
    return run, notes


def open_run(args: argparse.Namespace, inputs: Inputs) -> Run:
    """Open the store and run folder (the caller holds the run-dir lock), wire the task env."""
    args.run_dir.mkdir(parents=True, exist_ok=True)
    store = Store.open(args.run_dir / "harness.db")
    run_id, info = _run_id(args, store)
    if info is not None:
        inputs, args.only = _resumed(args, inputs, info)
    rundir = RunDir(args.run_dir, run_id)
    policy = inputs.policy.with_write_roots(rundir.root)
    events = configure_logging(rundir.events, level=args.log_level)
    rundir.point_latest()
    budget = _budget(args, inputs, store, run_id)
    store.begin_run(
        run_id,
        dt.datetime.now().astimezone(),
        args.provider,
        budget.cap_run,
        {"tasks": str(args.tasks), "seed": args.seed, "only": args.only},
    )
    stop = threading.Event()
    config = inputs.config
    calls = _CallLogs(store.call_log(run_id), rundir)
    caller = Caller(
        inputs.providers, inputs.prices, budget, calls, config.concurrency.providers, stop
    )
    router = Router.from_config(config, "sim" if args.provider == "sim" else None)
    run_tests, notes = _run_tests(inputs)
    env = TaskEnv(
        caller=caller,
        router=router,
        prompts=inputs.prompts,
        run_tests=run_tests,
        workdir=rundir.task_files,
        loop=config.loop,
        check_code=lambda code: [str(v) for v in policy.check_code(code)],
        check_write=lambda path: str(v) if (v := policy.check_write(path)) else None,
        scar_tissue=policy.scar_tissue,
        record_attempt=lambda task_id, record, code, result: store.record_attempt(
            run_id, task_id, record, code, result
        ),
    )
    root = default_prompts_dir()
    digests = {s.id: inputs_digest(s, root, router.routes) for s in inputs.specs}

    def after_summary(data: dict) -> None:
        store.finish_run(run_id, data["status"], dt.datetime.now().astimezone())
        if config.metrics.path is not None:
            write_metrics(
                config.metrics.path, render_metrics(data, store.totals(), config.metrics.labels)
            )

    def close() -> None:
        close_logging(events, level=args.log_level)
        store.close()

    return Run(
        inputs.specs,
        env,
        rundir,
        budget,
        stop,
        args.provider,
        args.concurrency or config.concurrency.tasks,
        notes=notes,
        close=close,
        store=store,
        digests=digests,
        resumed=info is not None,
        rerun=args.rerun,
        after_summary=after_summary,
    )
