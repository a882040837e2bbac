"""Warm task processes: a worker forks each task's shard from a process that has the harness
imported already, instead of starting a fresh interpreter that imports it again (seconds of
CPU a task).

A warm process is a multiprocessing fork server of the worker's own, preloaded with a
warm-up (harness/scale/warmup.py: every module a task imports, and the probes and shipped
data every task would otherwise read again). There are two kinds, so that a night pays only
for the imports it uses: `plain` (the simulator, a replay: no vendor SDK) and `vendors`
(plain and the vendor SDKs, for a live night). A worker starts one before it takes a task:
`vendors` when it holds a vendor's key (it can serve a live night, whose tasks then wait for
no import), else `plain`, and starts `vendors` the first time a live task comes if it has
not. A task of another night is forked from whichever is running. Each task is still a process
of its own, forked from one of them: its own structlog configuration, run lock, signal
handlers and memory, exactly as a fresh `python -m harness.scale.shard` had
(harness/scale/shard.py, `run_forked`). A warm process imports no Temporal code and starts no
thread (the sandbox probe it runs is a child process, waited for), so what it forks is clean.
It exits when its worker does (it reads EOF on its pipe from the worker), and every shard dies
with it (PR_SET_PDEATHSIG), so a SIGKILLed worker still leaves nothing running.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
from multiprocessing import forkserver, popen_forkserver, reduction, spawn, util
from multiprocessing.context import set_spawning_popen
from multiprocessing.process import BaseProcess

from harness.scale.shard import ready, run_forked

__all__ = [
    "PRELOAD",
    "VENDOR_KEYS",
    "exited",
    "first_kind",
    "kind_of",
    "start",
    "start_shard",
    "stop",
]

# Each kind's warm-up, imported once by its warm process (harness/scale/warmup.py).
PRELOAD = {
    "plain": ["harness.scale.warmup"],
    "vendors": ["harness.scale.warmup_vendors"],
}


def _server(kind: str) -> forkserver.ForkServer:
    server = forkserver.ForkServer()
    server.set_forkserver_preload(PRELOAD[kind])
    return server


_SERVERS = {kind: _server(kind) for kind in PRELOAD}
_STARTED: set[str] = set()  # the kinds this worker has started
# The variables the preloaded adapters read their keys from (harness/providers): a worker
# holding none cannot serve a live night's tasks with them.
VENDOR_KEYS = ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def first_kind() -> str:
    """The warm process a worker starts with: `vendors` when a vendor's key is set in its
    environment (only whether one is set is looked at), else `plain`."""
    return "vendors" if any(os.environ.get(name, "").strip() for name in VENDOR_KEYS) else "plain"


def kind_of(provider: str) -> str:
    """The warm process a night's tasks are forked from: a live night's has the vendor SDKs;
    any other night's is whichever is running (`plain` if none is)."""
    if provider == "live" or ("vendors" in _STARTED and "plain" not in _STARTED):
        return "vendors"
    return "plain"


class _Popen(popen_forkserver.Popen):
    """multiprocessing's fork-server start, asking the process's own kind of warm process
    rather than the one fork server multiprocessing keeps a process."""

    def _launch(self, process_obj: _Forked) -> None:  # as popen_forkserver.Popen._launch
        prep_data = spawn.get_preparation_data(process_obj.name)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        server = _SERVERS[process_obj.kind]
        self.sentinel, w = server.connect_to_new_process(self._fds)
        # A duplicate of the data pipe's write end, the child's sentinel of this process.
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Forked(BaseProcess):
    """A process forked from the warm process of its `kind`."""

    _start_method = "forkserver"

    def __init__(self, kind: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.kind = kind

    @staticmethod
    def _Popen(process_obj: _Forked) -> _Popen:
        return _Popen(process_obj)


def start(kind: str = "plain") -> None:
    """Start the warm process of `kind` and wait until it has imported everything and forks
    (a worker does this before it takes a task: a task's start never waits on those imports,
    unless it is the first live one of a worker that started `plain`)."""
    _STARTED.add(kind)
    proc = _Forked(kind, target=ready, name="harness-warm-up")
    proc.start()
    proc.join()
    proc.close()


async def start_shard(payload: str, kind: str = "plain") -> BaseProcess:
    """The task's shard, forked from the warm process of `kind` and running. Asking a warm
    process blocks (on its first use, for its imports), so it is asked from a thread."""
    _STARTED.add(kind)
    proc = _Forked(kind, target=run_forked, args=(payload,), name="harness-shard")
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
    """Stop every warm process and wait for each (so its CPU, and its shards', is counted as
    the worker's children's)."""
    for server in _SERVERS.values():
        with contextlib.suppress(AttributeError, OSError, ChildProcessError):
            server._stop()
