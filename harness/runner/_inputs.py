"""Start-up checks: everything a run needs, validated before anything is touched or spent.

Bad input of any kind (config, prices, task list, prompts, policy, keys, arguments) becomes
one BadInput: exit 2, no run folder, no lock, no call.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config import ConfigError, HarnessConfig, check_prices, load_config
from harness.errors import BadInput
from harness.guardrails import Policy, PolicyError, load_policy
from harness.pricing import PriceTable
from harness.prompts import PromptError, PromptSet, default_prompts_dir, known_types, task_context
from harness.runner._args import RunArgs
from harness.tasks import TaskListError, load_tasks
from harness.tasks.spec import TaskSpec

__all__ = ["Inputs", "check_inputs", "checked_policy", "load_task_list", "select"]


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
    filtered: tuple[TaskSpec, ...] = ()  # in the task list, left out by --only


def select(specs: list[TaskSpec], only: Sequence[str] | None) -> list[TaskSpec]:
    if not only:
        return specs
    known = {s.id for s in specs}
    unknown = [i for i in only if i not in known]
    if unknown:
        raise BadInput(
            f"--only: no task with id {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return [s for s in specs if s.id in only]


def _providers(args: RunArgs, config: HarnessConfig, specs: list[TaskSpec]) -> dict:
    if args.provider == "sim":
        from harness.providers.sim import SimProvider

        return {"sim": SimProvider({s.id: s for s in specs}, seed=args.seed)}
    from harness.providers import MissingKeyError, build_adapter

    loop = config.loop
    tiers = {*config.steps.values(), *([loop.escalate_to] if loop.escalate else [])}
    names = sorted({config.routes[t].provider for t in tiers})  # only what can be called
    try:
        return {n: build_adapter(n, timeout_s=config.provider_timeout_s) for n in names}
    except (MissingKeyError, ValueError) as exc:
        raise BadInput(str(exc)) from exc


def checked_policy(policy_path: Path | None, tasks_path: Path, specs: list[TaskSpec]) -> Policy:
    """The operator's policy, with every task's output proven to be under a write root."""
    try:
        policy = load_policy(policy_path, task_list_dir=tasks_path.resolve().parent)
    except PolicyError as exc:
        raise BadInput(str(exc)) from exc
    problems = policy.check_outputs(specs)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise BadInput(f"task outputs outside the allowed write roots; nothing ran:\n{lines}")
    return policy


def _check_metrics_path(config: HarnessConfig) -> None:
    """A metrics file that cannot be written should fail at start-up, not at dawn."""
    path = config.metrics.path
    if path is not None and not os.access(Path(path).parent, os.W_OK):
        raise BadInput(f"metrics.path: cannot write to {Path(path).parent}; fix it in harness.yaml")


def check_inputs(args: RunArgs) -> Inputs:
    """Validate config, prices, task list, prompts, policy and keys; raise BadInput (exit 2)."""
    try:
        config = load_config(args.config)
        prices = check_prices(config)
    except ConfigError as exc:
        raise BadInput(str(exc)) from exc
    if args.budget_usd is not None and not (0 < args.budget_usd < math.inf):
        raise BadInput(f"--budget-usd must be a positive amount of USD, not {args.budget_usd}")
    _check_metrics_path(config)
    if args.concurrency is not None and args.concurrency < 1:
        raise BadInput(f"--concurrency must be at least 1, not {args.concurrency}")
    root = default_prompts_dir()
    every = load_task_list(args.tasks, root)
    specs = select(every, args.only)
    try:
        prompts = {t: PromptSet(root, t) for t in {s.type for s in specs}}
        for spec in {s.type: s for s in specs}.values():
            prompts[spec.type].check(task_context(spec))
    except PromptError as exc:
        raise BadInput(str(exc)) from exc
    policy = checked_policy(args.policy, args.tasks, specs)
    providers = _providers(args, config, specs)
    filtered = tuple(s for s in every if s not in specs)
    return Inputs(config, prices, specs, prompts, policy, providers, filtered)
