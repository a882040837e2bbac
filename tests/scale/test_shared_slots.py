"""A provider's concurrency limit holds across every worker of a night (scale.database), and
a worker that dies gives its slots back."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from contextlib import ExitStack

import pytest

psycopg = pytest.importorskip("psycopg", reason="needs the scale extra (psycopg)")

from harness.calls.shared import SharedGates  # noqa: E402

LIMIT = 2


def _never() -> bool:
    return False


WAIT = 60  # seconds a thread may take to get a free slot before the test gives up on it


def _gates(database: str, night: str) -> SharedGates:
    return SharedGates(database, night, {"sim": LIMIT})


class _Waiter:
    """A thread of another worker asking for a slot, with a record of every try it made."""

    def __init__(self, gates: SharedGates, stopping: Callable[[], bool] = _never) -> None:
        self.entered = threading.Event()
        self.leave = threading.Event()
        self.refused = threading.Semaphore(0)  # released once per try that found none free
        take: Callable[[str], str | None] = gates._take_slot

        def counted(provider: str) -> str | None:
            key = take(provider)
            if key is None:
                self.refused.release()
            return key

        gates._take_slot = counted  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self._run, args=(gates, stopping), daemon=True)
        self.thread.start()

    def _run(self, gates: SharedGates, stopping: Callable[[], bool]) -> None:
        with gates.slot("sim", stopping):
            self.entered.set()
            self.leave.wait(WAIT)

    def refused_twice(self) -> bool:
        return self.refused.acquire(timeout=WAIT) and self.refused.acquire(timeout=WAIT)


def test_no_more_requests_than_the_limit_across_workers_until_one_ends(database):
    """Two workers hold the night's two slots; a third waits (it asked and was refused) until
    one of them lets its slot go, then gets it; another night's slots are its own."""
    night = f"night-{uuid.uuid4().hex[:8]}"
    a, b, c, other = (_gates(database, n) for n in (night, night, night, "another-night"))
    try:
        with ExitStack() as held:
            held.enter_context(a.slot("sim", _never))
            b_slot = ExitStack()
            b_slot.enter_context(b.slot("sim", _never))
            waiter = _Waiter(c)
            assert waiter.refused_twice()
            assert not waiter.entered.is_set()
            with other.slot("sim", _never), other.slot("sim", _never):  # its own limit
                pass
            b_slot.close()
            assert waiter.entered.wait(WAIT)
            waiter.leave.set()
            waiter.thread.join(WAIT)
    finally:
        for g in (a, b, c, other):
            g.close()


def test_threads_of_one_worker_count_each_slot_once(database):
    """One process's session re-enters its own advisory locks, so its threads must not share
    one slot: two threads of one worker hold both slots and a third thread waits."""
    night = f"night-{uuid.uuid4().hex[:8]}"
    gates = _gates(database, night)
    try:
        holders = [_Waiter(gates) for _ in range(LIMIT)]
        assert all(h.entered.wait(WAIT) for h in holders)
        third = _Waiter(gates)
        assert third.refused_twice()
        assert not third.entered.is_set()
        holders[0].leave.set()
        assert third.entered.wait(WAIT)
        for w in (*holders, third):
            w.leave.set()
            w.thread.join(WAIT)
    finally:
        gates.close()


_HOLDER = """
import sys, time
from contextlib import ExitStack
from harness.calls.shared import SharedGates
gates = SharedGates(sys.argv[1], sys.argv[2], {"sim": int(sys.argv[3])})
with ExitStack() as stack:
    for _ in range(int(sys.argv[3])):
        stack.enter_context(gates.slot("sim", lambda: False))
    print("held", flush=True)
    time.sleep(3600)
"""


def test_a_killed_worker_gives_its_slots_back(database):
    """A worker SIGKILLed while it holds every slot of the night: the others get them."""
    night = f"night-{uuid.uuid4().hex[:8]}"
    argv = [sys.executable, "-c", _HOLDER, database, night, str(LIMIT)]
    holder = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    gates = _gates(database, night)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        waiter = _Waiter(gates)
        assert waiter.refused_twice()
        assert not waiter.entered.is_set()
        holder.kill()
        holder.wait()
        assert waiter.entered.wait(WAIT)
        waiter.leave.set()
        waiter.thread.join(WAIT)
    finally:
        holder.kill()
        holder.wait()
        gates.close()


def test_a_wait_for_a_slot_ends_without_one_when_the_night_stops(database):
    """Every slot held elsewhere: a request waiting for one gives up once its process stops
    (holding none), instead of waiting for the others' calls to end."""
    night = f"night-{uuid.uuid4().hex[:8]}"
    holder, gates = _gates(database, night), _gates(database, night)
    stop = threading.Event()
    try:
        with ExitStack() as held:
            for _ in range(LIMIT):
                held.enter_context(holder.slot("sim", _never))
            waiter = _Waiter(gates, stop.is_set)
            assert waiter.refused_twice()
            assert not waiter.entered.is_set()
            stop.set()
            assert waiter.entered.wait(WAIT)
            assert gates._held == set()
            waiter.leave.set()
            waiter.thread.join(WAIT)
    finally:
        holder.close()
        gates.close()
