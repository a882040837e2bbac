"""Command line: argument parsing → one function per command → exit code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import __version__

__all__ = ["main"]

EXIT_OK, EXIT_NOT_ALL_PASSED, EXIT_BAD_INPUT, EXIT_BUDGET, EXIT_LOCKED, EXIT_INTERRUPTED = (
    0,
    1,
    2,
    3,
    75,
    130,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness", description="Overnight batch porting with test-driven termination."
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run a task list")
    run.add_argument("tasks", type=Path, help="the task list (YAML)")
    run.add_argument(
        "--provider",
        choices=("live", "sim"),
        default="live",
        help="live: the routes in config (default); sim: the offline simulator",
    )
    run.add_argument("--budget-usd", type=float, help="hard cap for this run, in USD")
    run.add_argument("--run-dir", type=Path, default=Path("runs"), help="where runs are kept")
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
    run.add_argument("--seed", type=int, default=0, help="simulator seed (with --provider sim)")
    run.add_argument(
        "--log-level",
        default="info",
        help="console log level",
        choices=("debug", "info", "warning", "error"),
    )

    summary = commands.add_parser("summary", help="print a run's morning summary")
    summary.add_argument(
        "run_dir",
        type=Path,
        nargs="?",
        default=Path("runs"),
        help="a run folder, or a run dir (its latest run); default runs/",
    )

    tasks = commands.add_parser("tasks", help="validate, list or add tasks")
    task_commands = tasks.add_subparsers(dest="tasks_command", required=True)
    validate = task_commands.add_parser("validate", help="check a task list (and its outputs)")
    validate.add_argument("file", type=Path)
    validate.add_argument("--policy", type=Path, help="guardrails policy the outputs must obey")
    listing = task_commands.add_parser("list", help="list a task list's tasks")
    listing.add_argument("file", type=Path)
    add = task_commands.add_parser("add", help="append a validated task, keeping comments")
    add.add_argument("file", type=Path)
    add.add_argument("--id", required=True)
    add.add_argument("--reference", required=True, nargs="+")
    add.add_argument("--tests", required=True, nargs="+")
    add.add_argument("--output", required=True)
    add.add_argument("--type")
    add.add_argument("--examples", nargs="+")
    add.add_argument("--capabilities")
    add.add_argument("--support", nargs="+")
    add.add_argument("--instructions")
    add.add_argument("--max-attempts", type=int, dest="max_attempts")
    add.add_argument("--solution")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and dispatch; returns the process exit code."""
    args = _parser().parse_args(argv)
    from harness import commands
    from harness.log import configure_logging

    configure_logging(None, level=getattr(args, "log_level", "info"))

    handler = {
        "run": commands.cmd_run,
        "summary": commands.cmd_summary,
        "tasks": commands.cmd_tasks,
    }[args.command]
    try:
        return handler(args)
    except commands.BadInput as exc:
        print(f"harness: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
