"""One task of a distributed night, run by today's runner in a process of its own.

A worker's activity starts `python -m harness.scale.shard ARGS.json`: the same start-up
checks, run lock, `open_run` and `execute` as `harness run --only ID --resume latest`, into the
task's own run folder under the night's (`<run-dir>/<run_id>/tasks/<task_id>/`). A retry after
a worker died is therefore exactly today's resume: recorded replies reused, the best attempt
kept, a task already finished carried over. Each shard is its own process, so structlog's
one configuration per process and the run lock hold as they do on one machine.
"""

from __future__ import annotations

import ctypes
import json
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import BadInput, ExitCode
from harness.scale.payloads import Shard, shard_dir

if TYPE_CHECKING:
    from harness.runner import RunArgs

__all__ = ["UNREACHABLE", "die_with_parent", "ready", "refusal_code", "run_forked", "run_shard"]


def _run_args(shard: Shard) -> RunArgs:
    # The runner is imported where a shard runs (the warm process has it), never by the
    # worker, which only names this module's functions to fork them.
    from harness.runner import RunArgs

    run_dir = shard_dir(shard.night, shard.task_id)
    tried = (run_dir / "harness.db").exists()  # a retry: resume what the last try recorded
    return RunArgs(
        tasks=Path(shard.night.tasks),
        provider=shard.night.provider,
        budget_usd=shard.night.task_cap_usd(),
        run_dir=run_dir,
        concurrency=1,
        only=(shard.task_id,),
        resume="latest" if tried else None,
        config=Path(shard.night.config) if shard.night.config else None,
        seed=shard.night.seed,
        log_level="warning",
        budget_scope=shard.night.run_id,
    )


def run_shard(shard: Shard) -> ExitCode:
    """Today's `harness run` for one task; its exit code."""
    from harness.runner import LockHeld, RunLock, check_inputs, execute, exit_code, open_run

    args = _run_args(shard)
    inputs = check_inputs(args)
    lock = RunLock(args.run_dir)
    try:
        lock.acquire()
    except LockHeld:
        return ExitCode.LOCKED
    try:
        run = open_run(args, inputs)
        if shard.night.batch:  # the workflow ran its batch phase on timers: no poll thread here
            run = replace(run, parts=replace(run.parts, batch=None))
        try:
            return exit_code(execute(run))
        finally:
            run.closing.close()
    finally:
        lock.release()


# The shard's exit when a service it needs (scale.database) stayed unreachable past
# scale.patience_s: weather, not bad input (EX_UNAVAILABLE; between a worker and its shard only).
UNREACHABLE = 69


def refusal_code(exc: BadInput) -> int:
    """A start-up refusal's exit: UNREACHABLE when an outage caused it, else bad input."""
    try:
        from harness.budget.shared import unreachable
    except ImportError:  # no psycopg: no database to be out
        return ExitCode.BAD_INPUT
    return UNREACHABLE if unreachable(exc) else ExitCode.BAD_INPUT


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """This process gets SIGKILL when the process that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def ready() -> None:
    """A warm process's first fork, which proves it has imported everything (warm.start)."""


def run_forked(payload: str) -> None:
    """A shard forked from a worker's warm process (harness/scale/warm.py): it dies with
    that process, and exits with the shard's code."""
    die_with_parent()
    sys.exit(main([payload]))


def main(argv: list[str]) -> int:
    from harness.log import configure_logging

    configure_logging(None, level="warning")
    try:
        return int(run_shard(Shard.from_json(json.loads(argv[0]))))
    except BadInput as exc:
        print(f"harness shard: {exc}", file=sys.stderr)
        return refusal_code(exc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
