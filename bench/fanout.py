"""Independent untimed work of one bench run (the policy nights by kind beside the
calibration, the sensitivity sweep's points) spread over a pool of forked processes, one per
core; results come back in the order asked.

A job is a function of the bench's `Stages`, whose outcomes depend only on their inputs
(Reproduce in docs/benchmarks.md), so where it runs cannot move a figure. The workers are
forked once the earlier stages are done: each starts with the test results and nights
remembered so far (bench/memo.py, `Stages._once`); what it counted (runs, hits, mismatches,
nights reused) is added to the parent's counts, and what it learned (test results, nights)
is remembered by the parent for the stages after it, in the order of the jobs. Timed nights
never run here: their wall time would share the cores."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from bench.stages import Stages

__all__ = ["fan_out", "workers"]

T = TypeVar("T")
Job = Callable[["Stages"], T]

# What a forked worker runs: set in the parent just before the fork, so jobs (closures over
# models and specs) are never pickled; only their results travel back.
_JOBS: list[tuple[Stages, Job]] = []


@dataclass(frozen=True)
class Counts:
    """What a job counted in its worker: per memo (runs, hits, verified hits, mismatches),
    and the nights it took from `Stages._once` instead of running them; and what it learned
    there: the test results and untimed nights it added (the parent remembers them too)."""

    memos: dict[str, tuple[int, int, int, tuple[str, ...]]]
    nights_reused: int
    learned: dict[str, dict] = field(default_factory=dict)
    nights: dict = field(default_factory=dict)


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
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(count, context, initializer=_own_ledger) as pool:
            done = list(pool.map(_run, range(len(jobs))))
    finally:
        _JOBS.clear()
    for _, counts in done:
        _add(st, counts)
    return [result for result, _ in done]


def _own_ledger() -> None:
    """A worker's day ledger of its own, beside the bench's private one (bench/__main__.py):
    no cap of a bench night binds on the day, and workers sharing one SQLite file would
    wait on each other's write lock at every call."""
    state = os.environ.get("XDG_STATE_HOME")
    if state:
        os.environ["XDG_STATE_HOME"] = os.path.join(state, f"worker-{os.getpid()}")


def _run(index: int) -> tuple[object, Counts]:
    """In a worker: run one job and return what it counted beside its result."""
    st, job = _JOBS[index]
    before = _counts(st)
    known = {kind: set(memo.known()) for kind, memo in st.memos.items()}
    ran = set(st.nights)
    result = job(st)
    after = _counts(st)
    learned = {
        kind: {k: v for k, v in memo.known().items() if k not in known[kind]}
        for kind, memo in st.memos.items()
    }
    nights = {key: night for key, night in st.nights.items() if key not in ran}
    memos = {
        kind: (
            runs - before.memos[kind][0],
            hits - before.memos[kind][1],
            verified - before.memos[kind][2],
            mismatches[len(before.memos[kind][3]) :],
        )
        for kind, (runs, hits, verified, mismatches) in after.memos.items()
    }
    return result, Counts(memos, after.nights_reused - before.nights_reused, learned, nights)


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
        memo.learn(counts.learned.get(kind, {}))
    st.nights_reused += counts.nights_reused
    for key, night in counts.nights.items():
        st.nights.setdefault(key, night)
