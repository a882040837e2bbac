"""One function per CLI command; each returns an exit code."""

from __future__ import annotations

import argparse
import os
import sys

from harness.report import load_summary, render_markdown
from harness.rundir import resolve_run

__all__ = ["BadInput", "cmd_run", "cmd_summary", "cmd_tasks"]


class BadInput(Exception):
    """Bad task list, config, policy or arguments: exit 2, nothing ran, nothing was spent."""


def cmd_run(args: argparse.Namespace) -> int:
    from harness.inputs import check_inputs
    from harness.lock import LockHeld, RunLock
    from harness.runner import execute, exit_code
    from harness.wiring import open_run

    inputs = check_inputs(args)  # nothing touched yet: bad input exits 2 with no trace
    try:
        lock = RunLock(args.run_dir)
        lock.acquire()
    except LockHeld as exc:
        print(f"harness: {exc}", file=sys.stderr)
        return 75
    except OSError as exc:
        raise BadInput(f"--run-dir {args.run_dir}: cannot lock it: {exc}") from exc
    try:
        run = open_run(args, inputs)
        try:
            summary = execute(run)
        finally:
            run.close()
    finally:
        lock.release()
    print(render_markdown(summary.to_json()))
    print(f"run folder: {run.rundir.root}", file=sys.stderr)
    return exit_code(summary)


def cmd_summary(args: argparse.Namespace) -> int:
    try:
        run = resolve_run(args.run_dir)
    except FileNotFoundError as exc:
        raise BadInput(str(exc)) from exc
    try:
        data = load_summary(run)
        text = render_markdown(data)
    except FileNotFoundError as exc:
        msg = (
            f"{run} has no summary yet: the run is still going, or was killed; "
            f"resume it with `harness run TASKS --run-dir DIR --resume {run.name}`"
        )
        raise BadInput(msg) from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"{run / 'summary.json'} is not a schema-1 summary: {exc!r}") from exc
    print(text)
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from harness.inputs import load_task_list

    if args.tasks_command == "add":
        from harness.taskedit import add_task

        add_task(args)
        print(f"added task {args.id!r} to {args.file}")
        return 0
    specs = load_task_list(args.file)
    if args.tasks_command == "validate":
        from harness.inputs import checked_policy

        checked_policy(args.policy, args.file, specs)
        print(f"{args.file}: {len(specs)} task(s), all valid")
        return 0
    for spec in specs:
        refs = ", ".join(os.path.relpath(p, spec.base_dir) for p in spec.reference)
        print(
            f"{spec.id}\t{spec.type}\t{refs} → {spec.output_rel}\tmax_attempts={spec.max_attempts}"
        )
    return 0
