"""Start-up: turn CLI arguments into a checked, ready Run. Nothing is spent here."""

from __future__ import annotations

import argparse
import threading
from decimal import Decimal
from pathlib import Path

import structlog

from harness.calls import Caller
from harness.commands import BadInput
from harness.config import ConfigError, HarnessConfig, check_prices, load_config
from harness.log import configure_logging
from harness.pipeline import TaskEnv
from harness.prompts import PromptError, PromptSet, default_prompts_dir, known_types
from harness.router import Router
from harness.rundir import RunDir, new_run_id
from harness.runner import Run
from harness.tasks import TaskListError, load_tasks
from harness.taskspec import TaskSpec

__all__ = ["load_task_list", "prepare_run"]

log = structlog.get_logger()


def load_task_list(path: Path, prompts_root: Path | None = None) -> list[TaskSpec]:
    """Load and validate; every problem becomes one BadInput listing them all."""
    root = prompts_root or default_prompts_dir()
    try:
        return load_tasks(path, known_types=known_types(root))
    except TaskListError as exc:
        count = len(exc.problems)
        raise BadInput(f"{count} problem(s) in the task list; nothing ran:\n{exc}") from exc


def _select(specs: list[TaskSpec], only: list[str] | None) -> list[TaskSpec]:
    if not only:
        return specs
    known = {s.id for s in specs}
    unknown = [i for i in only if i not in known]
    if unknown:
        raise BadInput(f"--only: no task with id {', '.join(unknown)}; known: {', '.join(sorted(known))}")
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


def _config(args: argparse.Namespace) -> tuple[HarnessConfig, object]:
    try:
        config = load_config(args.config)
        return config, check_prices(config)
    except ConfigError as exc:
        raise BadInput(str(exc)) from exc


def prepare_run(args: argparse.Namespace) -> Run:
    """Validate everything a run needs, then open its run directory."""
    from harness.budget import Budget
    from harness.testrun import TestLimits, run_tests

    config, prices = _config(args)
    root = default_prompts_dir()
    specs = _select(load_task_list(args.tasks, root), args.only)
    try:
        prompts = {t: PromptSet(root, t) for t in {s.type for s in specs}}
    except PromptError as exc:
        raise BadInput(str(exc)) from exc
    providers = _providers(args, config, specs)
    rundir = RunDir(args.run_dir, new_run_id())
    events = configure_logging(rundir.events, level=args.log_level)
    rundir.point_latest()
    stop = threading.Event()
    cap = Decimal(str(args.budget_usd)) if args.budget_usd is not None else None
    budget = Budget(cap_run=cap)
    limits = TestLimits(
        timeout_s=config.tests.timeout_s, per_test_timeout_s=config.tests.per_test_timeout_s
    )
    caller = Caller(providers, prices, budget, rundir, config.concurrency.providers, stop)
    env = TaskEnv(
        caller=caller,
        router=Router.from_config(config, "sim" if args.provider == "sim" else None),
        prompts=prompts,
        run_tests=lambda spec, code: run_tests(spec, code, limits=limits),
        workdir=rundir.task_files,
        loop=config.loop,
    )
    concurrency = args.concurrency or config.concurrency.tasks
    close = events.close if events else (lambda: None)
    return Run(specs, env, rundir, budget, stop, args.provider, concurrency, close=close)
