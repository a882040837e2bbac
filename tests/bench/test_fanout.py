"""bench/fanout.py: independent bench jobs across forked processes, in order, counted."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.fanout import fan_out, workers  # noqa: E402
from bench.memo import Memo, pytest_verdict  # noqa: E402


class _Stages:
    """What fan_out reads of a bench run's Stages: its memos, its nights and how many it
    reused."""

    def __init__(self) -> None:
        self.memos = {"baseline": Memo(pytest_verdict)}
        self.nights: dict[tuple, object] = {}
        self.nights_reused = 0


def _job(n: int):
    def job(st: _Stages) -> tuple[int, int]:
        st.memos["baseline"].runs += n
        st.memos["baseline"].learn({("a", str(n)): f"run {n}"})
        st.nights_reused += 1
        return n, os.getpid()

    return job


def test_results_come_back_in_order_and_the_workers_counts_are_added() -> None:
    """Each job's result in the order given, whatever worker ran it; what the jobs counted
    in their workers is added to the parent's counts, and the results they learned are
    remembered by the parent (a key it knew keeps its result)."""
    st = _Stages()
    st.memos["baseline"].learn({("a", "1"): "old"})

    results = fan_out(st, [_job(n) for n in range(1, 6)])

    assert [n for n, _ in results] == [1, 2, 3, 4, 5]
    assert workers(5) == 1 or os.getpid() not in {pid for _, pid in results}
    assert (st.memos["baseline"].runs, st.nights_reused) == (15, 5)
    assert st.memos["baseline"].known() == {
        ("a", "1"): "old",
        **{("a", str(n)): f"run {n}" for n in range(2, 6)},
    }


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


def _state(st: _Stages) -> str:
    return os.environ.get("XDG_STATE_HOME", "")


def test_each_worker_keeps_its_own_day_ledger(monkeypatch, tmp_path) -> None:
    """A forked worker's day ledger is its own folder under the bench's private state, so
    workers never wait on one SQLite write lock; the parent's stays where it was."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))

    states = fan_out(_Stages(), [_state, _state])

    if workers(2) > 1:
        assert all(
            Path(s).parent == tmp_path and Path(s).name.startswith("worker-") for s in states
        )
    assert os.environ["XDG_STATE_HOME"] == str(tmp_path)
