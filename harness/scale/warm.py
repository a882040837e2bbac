"""Warm task processes: a worker forks each task's shard from a process that has the harness
and the vendor SDKs imported already, instead of starting a fresh interpreter that imports
them again (seconds of CPU a task).

The warm process is multiprocessing's fork server, started once a worker with
harness/scale/warmup.py preloaded (every module a task imports, and the probes and shipped
data every task would otherwise read again). Each task is still a process of its own,
forked from it: its own structlog configuration, run lock, signal handlers and memory,
exactly as a fresh `python -m harness.scale.shard` had (harness/scale/shard.py,
`run_forked`). The fork server imports no Temporal code and starts no thread (the sandbox
probe it runs is a child process, waited for), so what it forks is clean. It exits when its worker
does (it reads EOF on its pipe from the worker), and every shard dies with it
(PR_SET_PDEATHSIG), so a SIGKILLed worker still leaves nothing running.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import multiprocessing
import multiprocessing.forkserver
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess

from harness.scale.shard import ready, run_forked

__all__ = ["PRELOAD", "exited", "start", "start_shard", "stop"]

# The warm-up, imported once by the warm process: every module a task imports and the
# caches that hold for the machine (harness/scale/warmup.py).
PRELOAD = ["harness.scale.warmup"]


@functools.cache
def _context() -> ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def start() -> None:
    """Start the warm process and wait until it has imported everything and forks (a worker
    does this before it takes a task: a task's start never waits on the imports)."""
    proc = _context().Process(target=ready, name="harness-warm-up")
    proc.start()
    proc.join()
    proc.close()


async def start_shard(payload: str) -> BaseProcess:
    """The task's shard, forked from the warm process and running. Asking the warm process
    blocks (on its first use, for its imports), so it is asked from a thread."""
    proc = _context().Process(target=run_forked, args=(payload,), name="harness-shard")
    await asyncio.get_running_loop().run_in_executor(None, proc.start)
    return proc


async def exited(proc: BaseProcess) -> int:
    """The shard's exit code once it has ended (negative: the signal that ended it)."""
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(proc.sentinel, ready)
    try:
        await ended
    finally:
        loop.remove_reader(proc.sentinel)
    proc.join()
    code = proc.exitcode
    proc.close()
    return int(code if code is not None else -1)


def stop() -> None:
    """Stop the warm process and wait for it (so its CPU, and its shards', is counted as the
    worker's children's)."""
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    with contextlib.suppress(AttributeError, OSError, ChildProcessError):
        server._stop()
