"""Start-up: turn CLI arguments into a checked, ready Run. Nothing is spent here."""

from __future__ import annotations

import datetime as dt
import functools
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import structlog

from harness.budget import Budget, LedgerError, MemoryLedger
from harness.budget.ledger import Ledger
from harness.calls import Caller, Gates, LocalGates, RetryPolicy
from harness.context import Confinement, Limits, ResultLog, ToolBox
from harness.deliver import DeliveryError, GitDelivery
from harness.errors import BadInput
from harness.log import close_logging, configure_logging
from harness.pipeline import TaskEnv
from harness.prompts import default_prompts_dir
from harness.report import render_metrics, write_metrics
from harness.results import Differential, TestResult
from harness.router import Router
from harness.runner.args import RunArgs
from harness.runner.batch.start import batch_clock, batch_night, batch_rounds, batch_vendors
from harness.runner.inputs import Inputs, select
from harness.runner.prepared import Closing, Parts, Plan, Run
from harness.store import (
    FolderToolLog,
    RunDir,
    RunInfo,
    RunParams,
    RunToolLog,
    ServedToolLog,
    Store,
    StoreError,
    new_run_id,
)
from harness.tasks import TaskSpec, declared_read_roots, inputs_digest, withheld_by_lists

__all__ = ["open_run"]

log = structlog.get_logger()


def _run_id(args: RunArgs, store: Store) -> tuple[str, RunInfo | None]:
    """A new run id, or the one to resume with what it was started with."""
    if args.resume is None:
        return new_run_id(), None
    run_id = store.latest_run() if args.resume == "latest" else args.resume
    if run_id is None:  # a run killed before it was recorded left nothing to resume or pay for
        log.warning("resume_found_nothing", run_dir=str(args.run_dir))
        return new_run_id(), None
    info = store.run_info(run_id) if run_id else None
    if info is None:
        raise BadInput(
            f"--resume: no run {args.resume!r} in {args.run_dir}; omit --resume to start anew"
        )
    _same_run(args, run_id, info)
    return run_id, info


def _same_run(args: RunArgs, run_id: str, info: RunInfo) -> None:
    """A resume must continue the same night: same provider, task list and (sim) seed."""
    if info.provider != args.provider:
        raise BadInput(f"--resume: run {run_id} used --provider {info.provider}; pass the same")
    tasks, seed = info.params.tasks, info.params.seed
    if tasks and tasks != args.tasks.resolve():
        raise BadInput(f"--resume: run {run_id} ran the task list {tasks}; pass that file")
    if args.provider == "sim" and seed is not None and seed != args.seed:
        raise BadInput(f"--resume: run {run_id} used --seed {seed}; pass the same")


def _resumed(args: RunArgs, inputs: Inputs, info: RunInfo) -> tuple[RunArgs, Inputs]:
    """A resume keeps the run's own cap and task selection unless restated on the command."""
    if args.budget_usd is None and info.cap_usd is not None:
        args = replace(args, budget_usd=info.cap_usd)
    if args.only is None and info.params.only is not None:
        args = replace(args, only=info.params.only)
    every = [*inputs.specs, *inputs.filtered]
    specs = select(every, args.only)
    filtered = tuple(s for s in every if s not in specs)
    return args, replace(inputs, specs=specs, filtered=filtered)


@dataclass(frozen=True)
class _Shared:
    """What the night shares beyond this process: its budget ledger and its credential gates
    (per process without `scale.database`), and what closes them."""

    ledger: Ledger | None  # None: the Budget's default, the machine's SQLite day ledger
    gates: Gates
    close: Callable[[], None]


def _budget(args: RunArgs, inputs: Inputs, store: Store, run_id: str) -> tuple[Budget, _Shared]:
    """The run's caps and what it shares; simulated or replayed spend never enters the day
    ledger."""
    specs = inputs.specs
    now = dt.datetime.now()
    budget_usd = Decimal(str(args.budget_usd)) if args.budget_usd is not None else None
    try:
        shared = _shared(args, inputs, run_id, inputs.config.budget.run_cap(budget_usd, now))
        budget = Budget.from_config(
            inputs.config.budget,
            budget_usd=budget_usd,
            now=now,
            ledger=shared.ledger,
            spent_run=store.spent(run_id),
            spent_tasks={s.id: store.spent(run_id, s.id) for s in specs},
        )
    except LedgerError as exc:
        raise BadInput(f"budget ledger: {exc}") from exc
    return budget, shared


def _shared(args: RunArgs, inputs: Inputs, run_id: str, cap: Decimal) -> _Shared:
    """Without `scale.database`, the machine's SQLite day ledger and this process's gates.
    With it, the shared ledger (the run's scope, a Temporal night's shared by its shards, and
    the day's, which every night on that database shares, local or distributed) and the
    night's gates and halt in that database (docs/scale.md)."""
    database = inputs.config.scale.database
    if database is None:
        ledger = MemoryLedger() if args.provider != "live" else None
        return _Shared(ledger, LocalGates(), lambda: None)
    try:
        from harness.budget.shared import Scope, open_shared_ledger
        from harness.calls.shared import SharedGates
    except ImportError as exc:
        raise BadInput(
            f"scale.database needs the scale extra ({exc}): pip install -e '.[scale]', or "
            "remove scale.database from the config"
        ) from exc
    night = args.budget_scope or run_id
    patience = inputs.config.scale.patience_s  # an outage is weather: waited out this long
    ledger = open_shared_ledger(
        database, Scope(f"run:{night}", cap), day=args.provider == "live", patience_s=patience
    )
    gates = SharedGates(database, night, inputs.config.provider_limits, patience_s=patience)

    def close() -> None:
        gates.close()
        ledger.close()

    return _Shared(ledger, gates, close)


class _CallLogs:
    """Tee calls to the run store first (what resume trusts), then the run folder."""

    def __init__(self, *logs: Any) -> None:
        self._logs = logs

    def open_call(self, request, reserved_usd) -> tuple:
        return tuple(call_log.open_call(request, reserved_usd) for call_log in self._logs)

    def close_call(self, handles: tuple, completion, cost_usd) -> None:
        for call_log, handle in zip(self._logs, handles, strict=True):
            call_log.close_call(handle, completion, cost_usd)

    def recorded(self, request):
        return self._logs[0].recorded(request)  # the store holds the replies resume trusts


@dataclass(frozen=True)
class Sandbox:
    """The night's test runners, bound to its limits, its slots and the command policy."""

    run: Callable[[TaskSpec, str], TestResult]
    expect: Callable[[TaskSpec], None]
    notes: tuple[str, ...]  # what the morning summary says about the isolation the tests had


def _recorded_checks(args: RunArgs) -> Callable[[TaskSpec, str], Differential | None]:
    """A replay's differential results: the recorded night's for the same candidate of the
    same task, read back from its store, never run again (the recorded result is what that
    night's prompts were made from). A candidate the recorded night never tested is checked
    as usual. A resumed run keeps its own attempts' results already (pipeline resume)."""
    if args.provider != "replay" or args.replay_from is None:
        return lambda spec, code: None
    from harness.store import find_run

    recording = find_run(args.replay_from, args.run_dir)
    path = recording.root.parent / "harness.db"

    def recorded(spec: TaskSpec, code: str) -> Differential | None:
        try:
            store = Store.open_readonly(path)
        except (sqlite3.Error, StoreError, OSError):
            return None
        try:
            attempts = store.load_attempts(recording.run_id, spec.id)
        except (sqlite3.Error, StoreError):
            return None
        finally:
            store.close()
        for attempt in attempts:
            result = attempt.result
            if attempt.code == code and result is not None and result.differential is not None:
                return result.differential
        return None

    return recorded


def _sandbox(
    inputs: Inputs,
    recorded: Callable[[TaskSpec, str], Differential | None] = lambda spec, code: None,
) -> Sandbox:
    from harness.testrun import (
        DifferentialSettings,
        SandboxError,
        TestLimits,
        expect_tests,
        run_tests,
        sandbox_kind,
    )

    tests = inputs.config.tests
    try:
        limits = TestLimits(
            timeout_s=tests.timeout_s,
            per_test_timeout_s=tests.per_test_timeout_s,
            sandbox=tests.sandbox,
        )
        kind = sandbox_kind(limits)
    except ValueError as exc:  # e.g. tests.timeout_s: .inf
        raise BadInput(f"config tests: {exc}") from exc
    except SandboxError as exc:  # e.g. the fallback cannot drop privileges: refuse to start
        raise BadInput(str(exc)) from exc
    slots = threading.BoundedSemaphore(inputs.config.concurrency.tests or os.cpu_count() or 1)
    chosen = inputs.config.differential.model_dump()
    differential = DifferentialSettings(**{**chosen, "ignore": tuple(chosen["ignore"])})
    policy = inputs.policy
    guard = policy.enforce_command

    def run(spec: TaskSpec, code: str) -> TestResult:
        # The operator's code policy was already applied by the pipeline (a violation is a
        # `guardrail` stop, not a test result); the sandbox adds its own pre-check (with the
        # policy's node modules for this task), and every command it starts passes the
        # operator's command policy first.
        refused = policy.refused_js_modules(spec.id)
        go_refused = policy.refused_go_packages(spec.id)
        checked = differential.over(spec.differential)
        served = recorded(spec, code) if checked.applies(spec.type) else None
        with slots:
            result = run_tests(
                spec,
                code,
                limits=limits,
                command_guard=guard,
                js_refused=refused,
                go_refused=go_refused,
                differential=checked if served is None else None,
            )
        if served is None or result.tampered:
            return result
        log.info("differential_served", task_id=spec.id, differed=served.differed)
        return replace(result, differential=served)

    def expect(spec: TaskSpec) -> None:
        # No slot: a test run holding one may wait for this collection, so the collection must
        # never wait for a slot (a short --collect-only run over the limit is the lesser harm).
        expect_tests(spec, limits, guard)

    notes = () if kind == "bwrap" else (_NO_BWRAP,)
    return Sandbox(run, expect, notes)


_NO_BWRAP = (
    "tests ran without bubblewrap isolation (rlimits and a scrubbed environment only); "
    "install bubblewrap"
)


def _sim_notes(inputs: Inputs) -> tuple[str, ...]:
    """What the morning summary says when the simulator answers tasks with their reference
    (no `solution:`): those results say nothing about a port."""
    # A wrapped simulator (the bench's timing wrapper) has no such list: no note then.
    answered = getattr(inputs.providers.get("sim"), "from_reference", ())
    running = {s.id for s in inputs.specs}
    ids = [task_id for task_id in answered if task_id in running]
    if not ids:
        return ()
    return (
        f"the simulator answered task(s) {', '.join(ids)} with their reference code, not a "
        "port, because they have no `solution:`; give each a known-good port as `solution:` "
        "to rehearse it",
    )


def _open_store(run_dir: Path) -> Store:
    try:
        return Store.open(run_dir / "harness.db")
    except (sqlite3.Error, StoreError, OSError) as exc:
        raise BadInput(f"run store {run_dir / 'harness.db'}: {exc}; move it aside") from exc


def _delivery(args: RunArgs, inputs: Inputs, run_id: str) -> GitDelivery | None:
    """Git delivery as configured (deliver.git), checked now: a problem exits 2."""
    config = inputs.config.deliver.git
    if config is None:
        return None

    def check(argv: list[str]) -> str | None:
        violation = inputs.policy.check_command(argv)
        return violation.detail if violation else None

    worktree = args.run_dir.resolve() / run_id / "git-worktree"
    try:
        return GitDelivery.plan(config, inputs.specs, args.tasks, run_id, worktree, check)
    except DeliveryError as exc:
        raise BadInput(f"deliver.git: {exc}; fix it or remove deliver: from the config") from exc


def open_run(args: RunArgs, inputs: Inputs) -> Run:
    """Open the store and run folder (the caller holds the run-dir lock), wire the task env.

    Everything that can refuse (sandbox, store, resume, budget ledger, delivery) runs before
    the run folder and the `latest` link exist, so a refusal leaves the run directory as it was.
    """
    sandbox = _sandbox(inputs, _recorded_checks(args))
    store = _open_store(args.run_dir)
    run_id, info = _run_id(args, store)
    if info is not None:
        args, inputs = _resumed(args, inputs, info)
    budget, shared = _budget(args, inputs, store, run_id)
    deliver = _delivery(args, inputs, run_id)
    vendors = batch_vendors(args, inputs)
    rundir = _begin(args, store, run_id, budget)
    stop = threading.Event()
    calls = _CallLogs(store.call_log(run_id), rundir)
    router = Router.from_config(inputs.config, args.provider if args.provider != "live" else None)
    caller = _caller(inputs, budget, calls, stop, shared.gates)
    # An events file the disk refuses halts the night like any other record it cannot keep.
    events = configure_logging(rundir.events, level=args.log_level, on_fault=caller.halt_records)
    record = functools.partial(store.record_attempt, run_id)
    env = _task_env(inputs, sandbox, caller, router, rundir, record)
    tool_log = _tool_log(args, store.tool_log(run_id, rundir.root))
    env = replace(env, toolbox=_toolbox(args, inputs, tool_log))
    started = info.started_at if info is not None else dt.datetime.now().astimezone()
    night = batch_night(
        vendors,
        inputs,
        budget,
        calls,
        store.batch_log(run_id),
        run_id,
        stop,
        started,
        batch_clock(args),
    )
    rounds = batch_rounds(inputs.config.batch, night, stop, batch_clock(args))
    caller.rounds = rounds
    parts = Parts(
        env=env,
        budget=budget,
        stop=stop,
        store=store,
        rundir=rundir,
        deliver=deliver,
        batch=night,
        rounds=rounds,
    )
    return Run(
        plan=_plan(args, inputs, router, info),
        parts=parts,
        closing=_closing(
            args, inputs, parts, run_id, events, sandbox.notes + _sim_notes(inputs), shared.close
        ),
    )


def _begin(args: RunArgs, store: Store, run_id: str, budget: Budget) -> RunDir:
    """Record the run first, so a kill at any later moment leaves a run `--resume` finds and
    finishes; then its folder and the `latest` link."""
    store.begin_run(
        run_id,
        dt.datetime.now().astimezone(),
        args.provider,
        budget.cap_run,
        RunParams(args.tasks.resolve(), args.seed, args.only),
    )
    rundir = RunDir(args.run_dir, run_id)
    rundir.point_latest()
    return rundir


def _caller(
    inputs: Inputs, budget: Budget, calls: _CallLogs, stop: threading.Event, gates: Gates
) -> Caller:
    return Caller(
        inputs.providers,
        inputs.prices,
        budget,
        calls,
        inputs.config.provider_limits,
        stop,
        retry=RetryPolicy(),
        gates=gates,
    )


def _task_env(
    inputs: Inputs,
    sandbox: Sandbox,
    caller: Caller,
    router: Router,
    rundir: RunDir,
    record_attempt: Callable[..., None],
) -> TaskEnv:
    policy = inputs.policy.with_write_roots(rundir.root)
    return TaskEnv(
        caller=caller,
        router=router,
        prompts=inputs.prompts,
        run_tests=sandbox.run,
        expect_tests=sandbox.expect,
        workdir=rundir.task_files,
        loop=inputs.config.loop,
        check_code=lambda code, language: [str(v) for v in policy.check_code(code, language)],
        check_write=lambda path: str(v) if (v := policy.check_write(path)) else None,
        scar_tissue=policy.scar_tissue,
        record_attempt=record_attempt,
    )


def _tool_log(args: RunArgs, own: RunToolLog) -> ResultLog:
    """Where tool results are kept and found again: this run's store; a replay serves the
    recorded night's instead of reading the disk, and keeps what it served in its own."""
    if args.provider != "replay" or args.replay_from is None:
        return own
    from harness.store import find_run

    return ServedToolLog(FolderToolLog(find_run(args.replay_from, args.run_dir).root), own)


def _toolbox(
    args: RunArgs, inputs: Inputs, tool_log: ResultLog
) -> Callable[[TaskSpec], ToolBox | None]:
    """Each task's context tools, or none when `loop.context_tools` is off. They read under
    the task list's folder and read_roots, never what the run keeps from a model."""
    settings = inputs.config.loop.context_tools
    if not settings.enabled:
        return lambda spec: None
    specs = (*inputs.specs, *inputs.filtered)
    withheld = [p for s in specs for p in (*s.hidden_tests, *([s.solution] if s.solution else []))]
    config = inputs.config
    files = (args.tasks, args.run_dir, args.config, args.policy, config.prices)
    files += (config.budget.ledger_path, config.metrics.path)
    withheld += [Path(p) for p in files if p is not None]
    base, roots = Path(args.tasks).resolve().parent, declared_read_roots(args.tasks)
    withheld += withheld_by_lists((base, *roots))  # other task lists' hidden inputs too
    confinement = Confinement.of(base, roots, withheld)
    limits = Limits(
        settings.rounds,
        settings.calls_per_round,
        settings.result_bytes,
        settings.step_bytes,
        settings.task_bytes,
    )
    outputs = frozenset(s.output.resolve() for s in specs)
    return lambda spec: ToolBox(confinement, limits, spec.id, tool_log, outputs)


def _plan(args: RunArgs, inputs: Inputs, router: Router, info: RunInfo | None) -> Plan:
    root = default_prompts_dir()
    return Plan(
        tasks=inputs.specs,
        filtered=inputs.filtered,
        digests={s.id: inputs_digest(s, root, router.routes) for s in inputs.specs},
        provider=args.provider,
        concurrency=args.concurrency or inputs.config.concurrency.tasks,
        resumed=info is not None,
        rerun=args.rerun or args.provider == "replay",  # a replay starts as its night did
        started_at=info.started_at if info is not None else None,
        task_list=args.tasks,
    )


def _closing(
    args: RunArgs,
    inputs: Inputs,
    parts: Parts,
    run_id: str,
    events: Any,
    notes: tuple[str, ...],
    close_ledger: Callable[[], None],
) -> Closing:
    metrics, store = inputs.config.metrics, parts.store

    def after_summary(data: dict) -> None:
        store.finish_run(run_id, data["status"], dt.datetime.now().astimezone())
        if metrics.path is None:
            return
        try:
            write_metrics(metrics.path, render_metrics(data, store.totals(), metrics.labels))
        except OSError as exc:  # the night's result stands; a missing metric is not a failure
            log.warning("metrics_write_failed", path=str(metrics.path), error=str(exc))

    def close() -> None:
        if parts.deliver is not None:
            parts.deliver.close()
        close_logging(events, level=args.log_level)
        store.close()
        close_ledger()

    return Closing(notes=notes, after_summary=after_summary, close=close)
