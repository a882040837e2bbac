"""Independent untimed work of one bench run (the sensitivity sweep's points, the calibration)
spread over a pool of forked processes, one per core; results come back in the order asked.

A job is a function of the bench's `Stages`, whose outcomes depend only on their inputs
(Reproduce in docs/benchmarks.md), so where it runs cannot move a figure. The workers are
forked once the earlier stages are done: each starts with the test results and nights
remembered so far (bench/memo.py, `Stages._once`) and adds its own, which stay in that
worker; what it counted (runs, hits, mismatches, nights reused) is added to the parent's
counts. Timed nights never run here: their wall time would share the cores."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from bench.stages import Stages

__all__ = ["Background", "fan_out", "workers"]

T = TypeVar("T")
Job = Callable[["Stages"], T]

# What a forked worker runs: set in the parent just before the fork, so jobs (closures over
# models and specs) are never pickled; only their results travel back.
_JOBS: list[tuple[Stages, Job]] = []


@dataclass(frozen=True)
class Counts:
    """What a job counted in its worker: per memo (runs, hits, verified hits, mismatches),
    and the nights it took from `Stages._once` instead of running them."""

    memos: dict[str, tuple[int, int, int, tuple[str, ...]]]
    nights_reused: int


def workers(jobs: int) -> int:
    """Processes for `jobs` jobs: one per core, and 1 (in this process) when the platform
    cannot fork or a thread is running (a fork would copy its locks mid-use)."""
    can_fork = "fork" in multiprocessing.get_all_start_methods()
    alone = threading.active_count() == 1
    return min(jobs, os.cpu_count() or 1) if can_fork and alone else 1


def fan_out(st: Stages, jobs: Sequence[Job[T]]) -> list[T]:
    """`job(st)` for each job, across `workers(len(jobs))` forked processes; in order."""
    count = workers(len(jobs))
    if count < 2:
        return [job(st) for job in jobs]
    _JOBS[:] = [(st, job) for job in jobs]
    try:
        with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork")) as pool:
            done = list(pool.map(_run, range(len(jobs))))
    finally:
        _JOBS.clear()
    for _, counts in done:
        _add(st, counts)
    return [result for result, _ in done]


class Background(Generic[T]):
    """One job started in a forked process now, while this process goes on; `result()` waits
    for it. Without a fork (see `workers`) the job runs when its result is asked for."""

    def __init__(self, st: Stages, job: Job[T]) -> None:
        self._st, self._job = st, job
        self._pool: ProcessPoolExecutor | None = None
        self._future: Future[tuple[T, Counts]] | None = None
        if workers(2) == 2:
            _JOBS[:] = [(st, job)]
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            self._future = self._pool.submit(_run, 0)  # forks the worker now

    def result(self) -> T:
        if self._pool is None or self._future is None:
            return self._job(self._st)
        try:
            result, counts = self._future.result()
        finally:
            self._pool.shutdown()
            _JOBS.clear()
        _add(self._st, counts)
        return result


def _run(index: int) -> tuple[object, Counts]:
    """In a worker: run one job and return what it counted beside its result."""
    st, job = _JOBS[index]
    before = _counts(st)
    result = job(st)
    after = _counts(st)
    memos = {
        kind: (
            runs - before.memos[kind][0],
            hits - before.memos[kind][1],
            verified - before.memos[kind][2],
            mismatches[len(before.memos[kind][3]) :],
        )
        for kind, (runs, hits, verified, mismatches) in after.memos.items()
    }
    return result, Counts(memos, after.nights_reused - before.nights_reused)


def _counts(st: Stages) -> Counts:
    memos = {
        kind: (m.runs, m.hits, m.verified, tuple(m.mismatches)) for kind, m in st.memos.items()
    }
    return Counts(memos, st.nights_reused)


def _add(st: Stages, counts: Counts) -> None:
    for kind, (runs, hits, verified, mismatches) in counts.memos.items():
        memo = st.memos[kind]
        memo.runs, memo.hits, memo.verified = (
            memo.runs + runs,
            memo.hits + hits,
            memo.verified + verified,
        )
        memo.mismatches.extend(mismatches)
    st.nights_reused += counts.nights_reused
