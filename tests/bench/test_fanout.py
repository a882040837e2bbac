"""bench/fanout.py: independent bench jobs across forked processes, in order, counted."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.fanout import Background, fan_out, workers  # noqa: E402
from bench.memo import Memo, pytest_verdict  # noqa: E402


class _Stages:
    """What fan_out reads of a bench run's Stages: its memos and the nights it reused."""

    def __init__(self) -> None:
        self.memos = {"baseline": Memo(pytest_verdict)}
        self.nights_reused = 0


def _job(n: int):
    def job(st: _Stages) -> tuple[int, int]:
        st.memos["baseline"].runs += n
        st.nights_reused += 1
        return n, os.getpid()

    return job


def test_results_come_back_in_order_and_the_workers_counts_are_added() -> None:
    """Each job's result in the order given, whatever worker ran it; what the jobs counted
    in their workers is added to the parent's counts."""
    st = _Stages()

    results = fan_out(st, [_job(n) for n in range(1, 6)])

    assert [n for n, _ in results] == [1, 2, 3, 4, 5]
    assert workers(5) == 1 or os.getpid() not in {pid for _, pid in results}
    assert (st.memos["baseline"].runs, st.nights_reused) == (15, 5)


def test_a_background_job_runs_beside_the_parent_and_counts() -> None:
    """A background job's result is its own; its counts reach the parent once it is read."""
    st = _Stages()

    started = Background(st, _job(7))
    result = started.result()

    assert (result[0], st.memos["baseline"].runs) == (7, 7)


def test_no_fork_while_a_thread_runs() -> None:
    """With another thread alive, jobs run in this process (a fork would copy its locks)."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        count = workers(4)
    finally:
        stop.set()
        thread.join()

    assert count == 1
