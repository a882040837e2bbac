"""Start-up checks: everything a run needs, validated before anything is touched or spent.

Bad input of any kind (config, prices, task list, prompts, policy, keys, arguments) becomes
one BadInput: exit 2, no run folder, no lock, no call.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.budget import ledger_path_problem
from harness.config import MAX_USD, ConfigError, HarnessConfig, check_prices, load_config
from harness.errors import BadInput
from harness.fsio import check_target
from harness.guardrails import Policy, PolicyError, load_policy
from harness.pricing import MILLION, PriceTable
from harness.prompts import PromptError, PromptSet, default_prompts_dir, known_types, task_context
from harness.results import money
from harness.router import Router
from harness.runner.args import RunArgs
from harness.tasks import TaskListError, TaskSpec, YamlError, load_tasks, read_yaml

__all__ = [
    "Inputs",
    "check_inputs",
    "endpoints_of",
    "load_task_list",
    "select",
    "write_check",
    "written_inputs",
]

MAX_POLICY_BYTES = 2**20
MAX_CONCURRENCY = 256


def _policy(policy_path: Path | None, tasks_path: Path) -> Policy:
    """The operator's policy (or the shipped one), refused with its line when malformed."""
    if policy_path is not None:
        # The policy's own loader parses with plain yaml.safe_load; this read first refuses
        # what would crash or hang it (a FIFO, non-UTF-8, deep nesting) or fool it (a
        # duplicate key), with the line.
        try:
            doc = read_yaml(policy_path, what="guardrails policy", max_bytes=MAX_POLICY_BYTES)
        except YamlError as exc:
            raise BadInput(str(exc)) from None
        if doc.duplicates:
            lines = [f"{policy_path}:{d.line}: {d.message}" for d in doc.duplicates]
            raise BadInput("\n".join(lines))
    try:
        return load_policy(policy_path, task_list_dir=Path(tasks_path).resolve().parent)
    except PolicyError as exc:
        raise BadInput(str(exc)) from exc


def _task_list(
    path: Path, prompts_root: Path, policy: Policy, guarded: dict[Path, str]
) -> list[TaskSpec]:
    def check_write(output: Path) -> str | None:
        violation = policy.check_write(output)
        return violation.detail if violation else None

    def check_command(argv: Sequence[str]) -> str | None:
        violation = policy.check_command(argv)
        return violation.detail if violation else None

    try:
        specs = load_tasks(
            path,
            known_types=known_types(prompts_root),
            check_write=check_write,
            guarded=guarded,
            check_command=check_command,
        )
    except TaskListError as exc:
        count = len(exc.problems)
        raise BadInput(f"{count} problem(s) in the task list; nothing ran:\n{exc}") from exc
    unknown = policy.unknown_tasks(s.id for s in specs)
    if unknown:
        raise BadInput("\n".join(unknown))
    return specs


def write_check(policy_path: Path | None, tasks_path: Path) -> Callable[[Path], str | None]:
    """The policy's write check over task outputs, as `tasks validate` applies it."""
    policy = _policy(policy_path, tasks_path)

    def check_write(output: Path) -> str | None:
        violation = policy.check_write(output)
        return violation.detail if violation else None

    return check_write


def load_task_list(
    path: Path, prompts_root: Path | None = None, *, policy_path: Path | None = None
) -> list[TaskSpec]:
    """Load and validate in one pass: schema, files, ids, overlaps, the outputs against the
    write roots and the test commands against the forbidden commands of the policy at
    `policy_path` (default: the shipped one). Every problem
    becomes one BadInput listing them all, sorted by line."""
    root = prompts_root or default_prompts_dir()
    return _task_list(path, root, _policy(policy_path, path), {})


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


def _replay(args: RunArgs) -> dict:
    """The replay provider over the recorded run's calls (read now: a bad one exits 2)."""
    if args.provider != "replay" or args.replay_from is None:
        raise BadInput("--provider replay and --replay-from RUN go together; give both")
    from harness.providers import ReplayProvider
    from harness.store import RecordingError, find_run, read_calls

    run = find_run(args.replay_from, args.run_dir)
    try:
        calls = read_calls(run.root)
    except RecordingError as exc:
        raise BadInput(f"--replay-from: {exc}") from exc
    return {"replay": ReplayProvider(calls, run.run_id, loose=args.replay_loose)}


def _providers(args: RunArgs, config: HarnessConfig, specs: list[TaskSpec]) -> dict:
    if args.provider == "replay" or args.replay_from is not None:
        return _replay(args)
    if args.provider == "sim":
        from harness.sim import SimProvider

        return {"sim": SimProvider({s.id: s for s in specs}, seed=args.seed)}
    from harness.providers import MissingKeyError, build_adapter

    loop = config.loop
    tiers = {*config.steps.values(), *([loop.escalate_to] if loop.escalate else [])}
    tiers |= {loop.judge.tier} if loop.judge.enabled else set()
    names = sorted({config.routes[t].provider for t in tiers})  # only what can be called
    endpoints = endpoints_of(config)
    try:
        return {
            n: build_adapter(n, timeout_s=config.provider_timeout_s, endpoints=endpoints)
            for n in names
        }
    except (MissingKeyError, ValueError) as exc:
        raise BadInput(str(exc)) from exc


def endpoints_of(config: HarnessConfig) -> dict:
    """The config's named endpoints as the providers' values; their key variables are
    secrets from now on, whether or not a route uses them (scrubbed everywhere)."""
    from harness.keys import declare
    from harness.providers import Endpoint

    declare(*(e.api_key_env for e in config.endpoints.values() if e.api_key_env))
    return {name: Endpoint(name, e.base_url, e.api_key_env) for name, e in config.endpoints.items()}


def _check_metrics_path(config: HarnessConfig, inputs: dict[Path, str]) -> None:
    """A metrics file that cannot be written should fail at start-up, not at dawn; and it
    replaces only a metrics file (never an input, never a file of the user's)."""
    path = config.metrics.path
    if path is None:
        return
    problem = check_target(Path(path), inputs=inputs, ours=_is_metrics)
    if problem:
        raise BadInput(f"metrics.path: {problem}; fix it in harness.yaml")
    parent = Path(path).parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        raise BadInput(f"metrics.path: cannot write to {parent}; fix it in harness.yaml")


def _is_metrics(path: Path) -> bool:
    """The file holds what write_metrics writes (an earlier night's metrics), or nothing."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(64)
    except OSError:
        return False
    return head == b"" or head.startswith(b"# HELP harness_")


def written_inputs(args: RunArgs, config: HarnessConfig, specs: Sequence[TaskSpec]) -> dict:
    """Every file a night reads, resolved → what it is: no path the harness writes (other
    than a task's own output) may be one of them."""
    found: dict[Path, str] = {args.tasks: "the task list"}
    for spec in specs:
        files = [*spec.reference, *spec.tests, *spec.hidden_tests, *spec.examples]
        files += [f for f in (spec.capabilities, spec.solution) if f is not None]
        found.update({f: f"an input of task {spec.id!r}" for f in [*files, *spec.support]})
        found[spec.output] = f"the output of task {spec.id!r}"
    found.update(_guarded(args, config))
    if config.budget.ledger_path is not None:
        found[config.budget.ledger_path] = "the day ledger (budget.ledger_path)"
    return {Path(p).resolve(): name for p, name in found.items()}


def _check_ledger(args: RunArgs, config: HarnessConfig) -> None:
    """The day ledger a live run will write (configured or default) is usable, before the run
    folder exists; the simulator's spend never enters it."""
    if args.provider != "live":
        return
    problem = ledger_path_problem(config.budget.ledger_path)
    if problem:
        raise BadInput(f"budget.ledger_path (the day ledger): {problem}; set it in harness.yaml")


def _check_first_call(args: RunArgs, config: HarnessConfig, prices: PriceTable) -> None:
    """The write step's route must fit under the caps, or every task's first call is refused
    and the night does nothing (a max_tokens typo, a cap in cents). The write reserves for the
    output cap the router gives it: the route's `max_tokens`, or `step_max_tokens.write` when
    that is smaller."""
    tier = config.steps["write"]
    route = Router.from_config(config).route("write")
    worst = route.max_tokens * prices.get(route.model, route.provider).output / MILLION
    budget = config.budget
    caps = {"run": budget.run_cap(args.budget_usd, dt.datetime.now()), "task": budget.task_cap_usd}
    for kind, cap in caps.items():
        if cap is not None and worst > cap:
            raise BadInput(
                f"the write step's route {tier!r} may cost {money(worst)} per call "
                f"({route.max_tokens} output tokens of {route.model}), more than the {kind} "
                f"cap ${cap}: no task could start; lower step_max_tokens.write or "
                f"routes.{tier}.max_tokens in harness.yaml, or raise the cap"
            )


def _guarded(args: RunArgs, config: HarnessConfig) -> dict[Path, str]:
    """The run's other input files, which no task output may overwrite."""
    files = {
        args.config: "the config (--config)",
        args.policy: "the guardrails policy (--policy)",
        config.prices: "the price table (prices:)",
    }
    return {Path(p).resolve(): name for p, name in files.items() if p is not None}


def _check_resume(args: RunArgs, config: HarnessConfig) -> None:
    """A run named to --resume must be in the run directory's store: looked up before the
    lock and the store would create anything there. A night on Temporal is looked up there by
    its id instead (harness/scale/client.py): its run store is written when it closes."""
    if args.resume in (None, "latest") or config.scale.engine == "temporal":
        return
    if not (args.run_dir / "harness.db").is_file():
        raise BadInput(
            f"--resume: no run {args.resume!r} in {args.run_dir} (it holds no run store); "
            "check --run-dir, or omit --resume to start anew"
        )


def check_inputs(args: RunArgs) -> Inputs:
    """Validate config, prices, task list, prompts, policy and keys; raise BadInput (exit 2)."""
    try:
        config = load_config(args.config)
        prices = check_prices(config)
    except ConfigError as exc:
        raise BadInput(str(exc)) from exc
    if args.budget_usd is not None and not (0 < args.budget_usd <= MAX_USD):
        raise BadInput(
            f"--budget-usd must be a positive amount of USD up to {MAX_USD:,}, "
            f"not {args.budget_usd}"
        )
    _check_resume(args, config)
    if args.concurrency is not None and not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise BadInput(f"--concurrency must be 1 to {MAX_CONCURRENCY}, not {args.concurrency}")
    _check_first_call(args, config, prices)
    _check_ledger(args, config)
    root = default_prompts_dir()
    policy = _policy(args.policy, args.tasks)
    every = _task_list(args.tasks, root, policy, _guarded(args, config))
    _check_metrics_path(config, written_inputs(args, config, every))
    specs = select(every, args.only)
    try:
        prompts = {t: PromptSet(root, t) for t in {s.type for s in specs}}
        for spec in {s.type: s for s in specs}.values():
            prompts[spec.type].check(task_context(spec), judge=config.loop.judge.enabled)
    except PromptError as exc:
        raise BadInput(str(exc)) from exc
    _check_shown(config, prompts)
    providers = _providers(args, config, specs)
    _check_collectable(config, specs, policy)
    filtered = tuple(s for s in every if s not in specs)
    return Inputs(config, prices, specs, prompts, policy, providers, filtered)


def _check_collectable(config: HarnessConfig, specs: Sequence[TaskSpec], policy: Policy) -> None:
    """Every Python task's tests can be collected against a stub candidate (testrun's
    collectable): a test file that cannot is bad input, named with its line and cause, before
    a call is made. Tasks are checked side by side; each answer is remembered by content."""
    from concurrent.futures import ThreadPoolExecutor

    from harness.testrun import SandboxError, TestLimits, collection_problems, problems_text

    tests = config.tests
    try:
        limits = TestLimits(
            timeout_s=tests.timeout_s,
            per_test_timeout_s=tests.per_test_timeout_s,
            sandbox=tests.sandbox,
        )

        def problems(spec: TaskSpec) -> list[str]:
            return problems_text(spec, collection_problems(spec, limits, policy.enforce_command))

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            found = [line for lines in pool.map(problems, specs) for line in lines]
    except ValueError as exc:  # e.g. tests.timeout_s: .inf
        raise BadInput(f"config tests: {exc}") from exc
    except SandboxError as exc:  # e.g. bubblewrap asked for and missing
        raise BadInput(str(exc)) from exc
    if found:
        raise BadInput("\n".join(found))


def _check_shown(config: HarnessConfig, prompts: dict[str, PromptSet]) -> None:
    """`loop.judge.shown` names principles that every judged task type has."""
    if not config.loop.judge.enabled:
        return
    for task_type, prompt_set in sorted(prompts.items()):
        numbers = {p.number for p in prompt_set.principles}
        unknown = sorted(set(config.loop.judge.shown) - numbers)
        if unknown:
            raise BadInput(
                f"loop.judge.shown names principle(s) {unknown}, but prompts/{task_type}/"
                f"principles.md has {len(numbers)}; name numbers from 1 to {len(numbers)}"
            )
