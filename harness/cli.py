"""Command line: argument parsing → one function per command → ExitCode."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__
from harness.errors import BadInput, ExitCode, printable
from harness.keys import scrub

if TYPE_CHECKING:
    from harness.config import ScaleConfig
    from harness.morning import EventFilter, RunStatusView
    from harness.report import RunSummary
    from harness.runner import RunArgs
    from harness.store import RunFolder

__all__ = ["main"]


class _Retired(argparse.Action):
    """`tasks add --results-path`: gone with the task field; say what replaced it (exit 2)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser.error(
            f"{option_string} is not used: the harness hands the test command a private pipe "
            "as {results}; drop it and put {results} in --test-command where the command names "
            "its report file, e.g. --test-reporter-destination={results}"
        )


def _run_parser(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser("run", help="run a task list")
    run.add_argument("tasks", type=Path, help="the task list (YAML)")
    run.add_argument(
        "--provider",
        choices=("live", "sim", "replay"),
        default="live",
        help="live: the routes in config (default); sim: the offline simulator; "
        "replay: the replies recorded by --replay-from's run",
    )
    run.add_argument("--replay-from", metavar="RUN", help="the run a replay serves calls from")
    run.add_argument(
        "--replay-loose",
        action="store_true",
        help="replay: serve the reply of the same task, step and attempt when only the prompt "
        "differs (test output that varies between runs), logging replay_prompt_differs",
    )
    run.add_argument("--budget-usd", type=float, help="hard cap for this run, in USD")
    run.add_argument(
        "--run-dir", type=Path, default=Path("runs"), help="where runs are kept (default: runs/)"
    )
    run.add_argument("--concurrency", type=int, help="tasks in parallel (default from config)")
    run.add_argument("--only", nargs="+", metavar="ID", help="run only these task ids")
    run.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        metavar="RUN_ID",
        help="continue an interrupted run (default: the latest)",
    )
    run.add_argument("--rerun", action="store_true", help="rerun tasks that are up to date")
    run.add_argument("--config", type=Path, help="operator config (harness.yaml)")
    run.add_argument("--policy", type=Path, help="guardrails policy (default: the shipped one)")
    run.add_argument("--seed", type=int, help="simulator seed (only with --provider sim)")
    run.add_argument(
        "--log-level",
        default="info",
        help="console log level (default: info); events.jsonl always has every event",
        choices=("debug", "info", "warning", "error"),
    )


def _tasks_parser(commands: argparse._SubParsersAction) -> None:
    tasks = commands.add_parser("tasks", help="validate, list or add tasks")
    task_commands = tasks.add_subparsers(dest="tasks_command", required=True)
    validate = task_commands.add_parser("validate", help="check a task list (and its outputs)")
    validate.add_argument("file", type=Path, help="the task list (YAML)")
    validate.add_argument("--policy", type=Path, help="guardrails policy the outputs must obey")
    validate.add_argument(
        "--static",
        action="store_true",
        help="only read the list: collect no test and run none (by default each Python task's "
        "tests are collected against a stub, and run both ways against its solution or "
        "Python reference; answers are remembered by content)",
    )
    validate.add_argument(
        "--both-ways",
        action="store_true",
        help="(the default) run each Python task's tests against its solution, or a Python "
        "reference, in_process and behind the boundary, and name every test whose result differs",
    )
    listing = task_commands.add_parser("list", help="list a task list's tasks")
    listing.add_argument("file", type=Path, help="the task list (YAML)")
    add = task_commands.add_parser("add", help="append a validated task, keeping comments")
    add.add_argument("file", type=Path, help="the task list to append to (created if absent)")
    add.add_argument("--id", required=True, help="unique id: letters, digits, - and _")
    add.add_argument("--reference", required=True, nargs="+", help="the code to port")
    add.add_argument("--tests", required=True, nargs="+", help="the acceptance tests")
    add.add_argument("--output", required=True, help="the file the harness writes")
    add.add_argument("--type", help="prompt set under prompts/ (default: service_port)")
    add.add_argument("--examples", nargs="+", help="gold-standard ported examples")
    add.add_argument("--capabilities", help="capability signatures of the target platform")
    add.add_argument("--support", nargs="+", help="files or folders the tests need")
    add.add_argument(
        "--hidden-tests",
        dest="hidden_tests",
        nargs="+",
        help="tests run on every candidate but never shown to the model",
    )
    add.add_argument(
        "--isolation",
        choices=("boundary", "in_process"),
        help="Python: the candidate behind a boundary (default) or in the tests' process",
    )
    add.add_argument("--instructions", help="extra text for the write prompt")
    add.add_argument("--max-attempts", type=int, dest="max_attempts", help="attempts at most")
    add.add_argument("--solution", help="a known-good port, used only by --provider sim")
    add.add_argument("--language", help="the output's language (default: python)")
    add.add_argument(
        "--test-command",
        dest="test_command",
        help="command running the tests, split like shell words but never run by a shell; "
        "{tests}, {output}, {results} are expanded (default: the language's)",
    )
    add.add_argument("--results", help="how outcomes are read: pytest | junit | go-json")
    add.add_argument("--results-path", nargs="?", action=_Retired, help=argparse.SUPPRESS)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness", description="Overnight batch porting with test-driven termination."
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    _run_parser(commands)
    summary = commands.add_parser("summary", help="print a run's morning summary")
    summary.add_argument(
        "run_dir",
        type=Path,
        nargs="?",
        default=Path("runs"),
        help="a run folder, or a run dir (its latest run); default runs/",
    )
    _tasks_parser(commands)
    worker = commands.add_parser("worker", help="serve distributed nights (config scale:)")
    worker.add_argument("--config", type=Path, required=True, help="the cluster's harness.yaml")
    worker.add_argument("--concurrency", type=int, help="tasks at once (default from config)")
    worker.add_argument("--log-level", default="info", choices=("debug", "info", "warning"))
    from harness.morning import add_parsers

    add_parsers(commands)
    return parser


def _check_flags(ns: argparse.Namespace) -> None:
    """A flag the chosen provider would ignore is a mistake to say, not to skip."""
    if ns.seed is not None and ns.provider != "sim":
        raise BadInput(f"--seed is for --provider sim; --provider {ns.provider} takes no seed")
    if ns.replay_loose and ns.provider != "replay":
        raise BadInput(f"--replay-loose is for --provider replay, not --provider {ns.provider}")
    if ns.replay_from is not None and ns.provider != "replay":
        raise BadInput(f"--replay-from is for --provider replay, not --provider {ns.provider}")


def run_args(ns: argparse.Namespace) -> RunArgs:
    """The parsed `harness run` command line as a frozen RunArgs (BadInput for a flag that
    does not apply to the chosen provider)."""
    from harness.runner import RunArgs

    _check_flags(ns)
    return RunArgs(
        tasks=ns.tasks,
        provider=ns.provider,
        budget_usd=ns.budget_usd,
        run_dir=ns.run_dir,
        concurrency=ns.concurrency,
        only=tuple(ns.only) if ns.only is not None else None,
        resume=ns.resume,
        rerun=ns.rerun,
        config=ns.config,
        policy=ns.policy,
        seed=ns.seed if ns.seed is not None else 0,
        log_level=ns.log_level,
        replay_from=ns.replay_from,
        replay_loose=ns.replay_loose,
    )


def _silence_stdout() -> None:
    """The reader of stdout went away (`| head -1`): point stdout at /dev/null, so Python's
    own flush at exit does not print a BrokenPipeError traceback either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _say(text: str) -> None:
    """Print a command's answer; a reader that stops reading early is not an error."""
    try:
        sys.stdout.write(printable(scrub(text)) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


def _tell(text: str) -> None:
    """A message on stderr: secrets masked, control characters escaped (a path or a key
    from a file may hold an ESC), so what the terminal shows is what was meant."""
    print(printable(scrub(text)), file=sys.stderr)


def cmd_run(ns: argparse.Namespace) -> ExitCode:
    """`harness run`. SIGTERM before the pool takes it over (start-up, open) ends the run as
    SIGINT does: exit 130 (README), never the default 143; the pool installs its own."""
    if threading.current_thread() is not threading.main_thread():
        return _run(ns)  # signals reach the main thread only
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _run(ns)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(ns: argparse.Namespace) -> ExitCode:
    from harness.console import night_console
    from harness.log import configure_logging
    from harness.report import render_markdown
    from harness.runner import check_inputs, exit_code

    args = run_args(ns)
    with night_console(args.log_level, sys.stderr):  # the board, or lines (docs/operations.md)
        configure_logging(None, level=args.log_level)
        inputs = check_inputs(args)  # nothing touched yet: bad input exits 2 with no trace
        scaled = inputs.config.scale.engine == "temporal"
        night = None if scaled else _local_night(args, inputs)
    if night is None:  # docs/scale.md
        with _scale_extras():
            from harness.scale.client import run_night
        with _temporal_client():
            code, text, root = run_night(args, inputs)
            _say(text)
            _tell(f"run folder: {root}")
            _exit_now(code)
    if isinstance(night, ExitCode):
        return night
    summary, root = night
    _say(render_markdown(summary.to_json()))
    _tell(f"run folder: {root}")
    return exit_code(summary)


def _interrupt(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def _local_night(args: RunArgs, inputs: Any) -> ExitCode | tuple[RunSummary, Path]:
    """lock → open → execute → close: (the summary, the run folder), or LOCKED."""
    from harness.runner import LockHeld, RunLock, execute, open_run

    try:
        lock = RunLock(args.run_dir)
        lock.acquire()
    except LockHeld as exc:
        _tell(f"harness: {exc}")
        return ExitCode.LOCKED
    except OSError as exc:
        raise BadInput(f"--run-dir {args.run_dir}: cannot lock it: {exc}") from exc
    try:
        run = open_run(args, inputs)
        try:
            summary = execute(run)
        finally:
            run.closing.close()
    finally:
        lock.release()
    return summary, run.parts.rundir.root


def _exit_now(code: int) -> None:
    """Exit with `code` once output is flushed: a Temporal client may abort at interpreter
    exit after its work is done, which must not change the exit status cron sees."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


@contextmanager
def _scale_extras() -> Iterator[None]:
    """Around an import of `harness.scale`: the scale extras missing is BadInput (exit 2)
    saying how to install them, never a ModuleNotFoundError traceback."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "harness":
            raise
        raise BadInput(
            f"scale.engine: temporal needs the scale extras ({exc.name} is not installed): "
            "pip install -e '.[scale]', or set scale.engine: local in the config"
        ) from exc


@contextmanager
def _temporal_client() -> Iterator[None]:
    """Around a command's use of Temporal's client: however the command ends, the process
    exits here, with the code `main` would return, once output is flushed (`_exit_now`).

    The client's Rust runtime keeps threads that may call into Python while the interpreter
    finalizes (temporalio/sdk-python#300): `Fatal Python error: PyGILState_Release`, then
    SIGABRT, at random, after a clean ending or a refusal alike; that must not replace the
    exit status cron sees. So a process that started the client never finalizes."""
    try:
        yield
    except SystemExit as exc:
        _exit_now(exc.code if isinstance(exc.code, int) else ExitCode.NOT_ALL_PASSED)
    except BaseException as exc:
        try:
            code = _ending(exc)
        except BaseException:
            traceback.print_exc()
            code = ExitCode.NOT_ALL_PASSED
        _exit_now(code)


def cmd_worker(ns: argparse.Namespace) -> ExitCode:
    import asyncio

    from harness.config import ConfigError, load_config

    try:
        config = load_config(ns.config)
    except ConfigError as exc:
        raise BadInput(str(exc)) from exc
    with _scale_extras():
        from harness.scale.worker import serve
    with _temporal_client():
        asyncio.run(serve(config.scale, ns.concurrency or config.concurrency.tasks))
        _exit_now(ExitCode.OK)
    return ExitCode.OK


def cmd_summary(ns: argparse.Namespace) -> ExitCode:
    from harness.report import SummaryError, load_summary, render_markdown
    from harness.store import resolve_run

    try:
        run = resolve_run(ns.run_dir)
    except FileNotFoundError as exc:
        raise BadInput(str(exc)) from exc
    try:
        text = render_markdown(load_summary(run))
    except FileNotFoundError as exc:
        msg = (
            f"{run} has no summary yet: the run is still going, or was killed; "
            f"resume it with `harness run TASKS --run-dir DIR --resume {run.name}`"
        )
        raise BadInput(msg) from exc
    except SummaryError as exc:
        raise BadInput(str(exc)) from exc
    _say(text)
    return ExitCode.OK


_ADD_FIELDS = [
    "id",
    "reference",
    "tests",
    "output",
    "type",
    "examples",
    "capabilities",
    "support",
    "hidden_tests",
    "isolation",
    "instructions",
    "max_attempts",
    "solution",
    "language",
    "test_command",
    "results",
]


def cmd_tasks(ns: argparse.Namespace) -> ExitCode:
    from harness.prompts import default_prompts_dir, known_types
    from harness.runner import load_task_list

    if ns.tasks_command == "add":
        from harness.runner import write_check
        from harness.tasks import add_task

        fields = {name: getattr(ns, name) for name in _ADD_FIELDS}
        types = known_types(default_prompts_dir())
        add_task(ns.file, fields, known_types=types, check_write=write_check(None, ns.file))
        _say(f"added task {ns.id!r} to {ns.file}")
        return ExitCode.OK
    specs = load_task_list(ns.file, policy_path=getattr(ns, "policy", None))
    if ns.tasks_command == "validate":
        if ns.static:
            _say(f"{ns.file}: {len(specs)} task(s), all valid")
            return ExitCode.OK
        return _validate_by_running(ns.file, specs)
    for spec in specs:
        refs = ", ".join(os.path.relpath(p, spec.base_dir) for p in spec.reference)
        print(
            f"{spec.id}\t{spec.type}\t{spec.language}\t{refs} → {spec.output_rel}\t"
            f"max_attempts={spec.max_attempts}"
        )
    return ExitCode.OK


def _validate_by_running(path: Path, specs: list) -> ExitCode:
    """`tasks validate`: the list read, then every Python task's tests collected against a
    stub (a file that cannot be is bad input) and run both ways where code exists to run."""
    from concurrent.futures import ThreadPoolExecutor

    from harness.testrun import collection_problems, problems_text

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        found = pool.map(lambda spec: problems_text(spec, collection_problems(spec)), specs)
        problems = [line for lines in found for line in lines]
    if problems:
        raise BadInput("\n".join(problems))
    print(f"{path}: {len(specs)} task(s), all valid")
    return _both_ways(specs)


def _runnable(spec) -> str | None:
    """The code a Python task's tests can be run against before any night: its solution, or
    else its one reference when that is Python too."""
    if spec.language != "python" or spec.test_command:
        return None
    if spec.solution is not None:
        return spec.solution.read_text(encoding="utf-8")
    python = [p for p in spec.reference if p.suffix == ".py"]
    return (
        python[0].read_text(encoding="utf-8") if len(spec.reference) == len(python) == 1 else None
    )


def _both_ways(specs: list) -> ExitCode:
    """Each Python task with code to run, both isolation modes: a boundary task whose tests
    differ is bad input (its list must say in_process, or the tests change)."""
    from concurrent.futures import ThreadPoolExecutor

    from harness.testrun import isolation_differences

    def differences(spec) -> list | None:
        code = _runnable(spec)
        return None if code is None else isolation_differences(spec, code)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        answers = list(pool.map(differences, specs))
    bad = False
    for spec, found in zip(specs, answers, strict=True):
        if found is None:
            continue
        for diff in found:
            print(
                f"{spec.id}: {diff.nodeid}: in_process {diff.in_process} | boundary {diff.boundary}"
            )
        if found and spec.isolation == "boundary":
            bad = True
            print(
                f"{spec.id}: {len(found)} test(s) differ behind the boundary; give the task "
                "`isolation: in_process` or change those tests (docs/boundary.md says what "
                "cannot cross)"
            )
        elif not found:
            print(f"{spec.id}: the same results in_process and behind the boundary")
    return ExitCode.BAD_INPUT if bad else ExitCode.OK


def cmd_events(ns: argparse.Namespace) -> ExitCode:
    from harness.console import render_events
    from harness.morning import EventFilter, select_events, show_artefact
    from harness.store import find_run

    run = find_run(ns.run, ns.run_dir)
    if ns.show:
        if ns.follow:
            raise BadInput("--follow prints events as they come; --show prints one artefact")
        sys.stdout.write(show_artefact(run, ns.show, ns.task, ns.attempt, ns.step))
        return ExitCode.OK
    if ns.follow:
        return _follow(run, EventFilter(ns.task, ns.attempt, ns.event), ns.json)
    rows = select_events(run.events(), EventFilter(ns.task, ns.attempt, ns.event))
    if ns.json:
        lines = [json.dumps(event) for event, _ in rows]
    else:
        lines = render_events(rows, colour=sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    if lines:
        print("\n".join(lines))
    return ExitCode.OK


def _follow(run: RunFolder, keep: EventFilter, as_json: bool) -> ExitCode:
    """`events --follow`: each kept event as the night writes it, until the night ends. A
    filter that matched nothing by then is refused as it is without --follow."""
    from harness.console import render_events
    from harness.morning import check_filter, check_pattern, follow_events, with_attempts

    check_pattern(keep)
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    seen: list[tuple[dict, int | None]] = []
    shown = 0
    events = follow_events(run.root / "events.jsonl", lambda: _running(run) is None)
    try:
        for event, attempt in with_attempts(events):
            seen.append((event, attempt))
            if keep.keeps(event, attempt):
                shown += 1
                row = [(event, attempt)]
                _say(json.dumps(event) if as_json else render_events(row, colour, (12, 18))[0])
    except KeyboardInterrupt:  # the watcher stopped watching: not a failure
        return ExitCode.OK
    if not shown:
        check_filter(seen, keep)
    return ExitCode.OK


def cmd_compare(ns: argparse.Namespace) -> ExitCode:
    from harness.morning import compare_runs, render_comparison
    from harness.store import find_run

    cmp = compare_runs(find_run(ns.run_a, ns.run_dir), find_run(ns.run_b, ns.run_dir))
    print(json.dumps(cmp.to_json(), indent=2) if ns.json else render_comparison(cmp))
    return ExitCode.OK


def cmd_export(ns: argparse.Namespace) -> ExitCode:
    from harness.morning import export_prefs
    from harness.store import find_run

    done = export_prefs(
        [find_run(r, ns.run_dir) for r in ns.runs],
        ns.out,
        same_prompt=ns.same_prompt,
        force=ns.force,
    )
    print(f"{done.pairs} pair(s) to {done.out}, {done.meta}; {done.skipped} task(s) without a pair")
    return ExitCode.OK


def _running(run) -> int | None:
    """The pid of the live night in `run`'s run directory, if it is running that very run."""
    from harness.runner import live_holder

    pid = live_holder(run.root.parent)
    if pid is None:
        return None
    with run.store() as store:
        return pid if store.latest_run() == run.run_id else None


def cmd_status(ns: argparse.Namespace) -> ExitCode:
    from harness.morning import read_status, render_status
    from harness.store import find_run

    run = find_run(ns.run, ns.run_dir)
    if ns.watch:
        return _watch(run, ns.json)
    view = read_status(run, running=_running(run) is not None)
    _say(json.dumps(view.to_json(), indent=2) if ns.json else render_status(view))
    return ExitCode.OK


def _watch(run: RunFolder, as_json: bool) -> ExitCode:
    """`status --watch`: the board on a terminal, else a line (or object) per change."""
    from harness.console import Board, is_terminal
    from harness.morning import render_status, watch_status

    board = Board()
    said: list[str] = []

    def line(view: RunStatusView) -> None:
        text = json.dumps(view.to_json()) if as_json else render_status(view)
        if not said or said[-1] != text:
            said.append(text)
            _say(text)

    def running() -> bool:
        return _running(run) is not None

    try:
        if as_json or not is_terminal(sys.stdout):
            watch_status(run, running, line, board)
        else:
            from harness.console import WatchBoard

            with WatchBoard(board, sys.stdout) as screen:
                watch_status(run, running, screen.show, board)
    except KeyboardInterrupt:  # the watcher stopped watching: not a failure
        pass
    return ExitCode.OK


def cmd_stop(ns: argparse.Namespace) -> ExitCode:
    import signal
    import time

    from harness.morning import read_status, render_status
    from harness.runner import signal_holder
    from harness.store import find_run

    scale = _scale(ns.config) if ns.config is not None else None
    if scale is not None and scale.engine == "temporal":
        return _stop_cluster_night(ns, scale)
    run = find_run(ns.run, ns.run_dir)
    view = read_status(run, running=False)
    if view.state == "finished":
        raise BadInput(f"run {view.run_id} finished ({view.status}); nothing to stop")
    pid = _running(run)
    if pid is None:
        raise BadInput(
            f"run {view.run_id} is not running (no live harness holds {run.root.parent}); it was "
            f"killed or is still starting: resume it with `harness run TASKS --run-dir "
            f"{run.root.parent} --resume {view.run_id}`"
        )
    try:
        sent = signal_holder(run.root.parent, pid, signal.SIGTERM)
    except PermissionError as exc:
        raise BadInput(f"pid {pid} runs as another user; run `harness stop` as that user") from exc
    if sent:
        print(f"harness: sent SIGTERM to pid {pid}; waiting for its summary", file=sys.stderr)
    else:  # it ended between the look and the signal: report what it left
        print(f"harness: pid {pid} ended before the signal; no signal sent", file=sys.stderr)
    deadline = time.monotonic() + ns.wait
    while _running(run) == pid and time.monotonic() < deadline:
        time.sleep(0.2)
    _say(render_status(read_status(run, running=_running(run) is not None)))
    return ExitCode.OK


def _scale(config: Path) -> ScaleConfig:
    from harness.config import ConfigError, load_config

    try:
        return load_config(config).scale
    except ConfigError as exc:
        raise BadInput(str(exc)) from exc


def _stop_cluster_night(ns: argparse.Namespace, scale: ScaleConfig) -> ExitCode:
    """`harness stop RUN --config cluster.yaml`: the night's `stop` signal, then its summary."""
    from harness.report import load_summary, render_markdown

    if ns.run is None:
        raise BadInput("--config with scale.engine temporal: name the night's run id (RUN)")
    with _scale_extras():
        from harness.scale.client import stop_night
    run_id = Path(ns.run).name  # a run id, or a run folder (named by its run id)
    with _temporal_client():
        print(f"harness: stopping night {run_id}; waiting for its summary", file=sys.stderr)
        code, folder = stop_night(scale, run_id, ns.wait)
        if code is None:
            print(f"harness: night {run_id} is still saving after {ns.wait:g} s", file=sys.stderr)
        else:
            _say(render_markdown(load_summary(folder)))
            print(f"harness: night {run_id} ended with exit {int(code)}", file=sys.stderr)
        _exit_now(ExitCode.OK)
    return ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and dispatch; returns the process exit code."""
    args = _parser().parse_args(argv)
    from harness.log import configure_logging

    # Only `run` narrates on stderr; the other commands print their answer and nothing else.
    configure_logging(None, level=getattr(args, "log_level", "warning"))
    handler = {
        "run": cmd_run,
        "summary": cmd_summary,
        "tasks": cmd_tasks,
        "events": cmd_events,
        "compare": cmd_compare,
        "export": cmd_export,
        "worker": cmd_worker,
        "status": cmd_status,
        "stop": cmd_stop,
    }[args.command]
    try:
        return int(handler(args))
    except (Exception, KeyboardInterrupt) as exc:
        return _ending(exc)


def _ending(exc: BaseException) -> int:
    """The exit code of a command that ended in `exc`, said in one line on stderr; what is
    not a known ending is raised again (a traceback: a harness bug)."""
    from harness.fsio import write_refused

    if isinstance(exc, BadInput):
        _tell(f"harness: {exc}")
        return ExitCode.BAD_INPUT
    if isinstance(exc, KeyboardInterrupt):
        print("harness: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    if isinstance(exc, BrokenPipeError):  # `harness tasks list | head -1`: not wanted whole
        _silence_stdout()
        return ExitCode.OK
    if write_refused(exc):  # a full disk: one line a person acts on, never a traceback
        _tell(f"harness: halted: the run's records could not be written: {exc}")
        return ExitCode.HALTED
    raise exc
