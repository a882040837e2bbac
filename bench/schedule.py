"""Lower bounds and projections of a night's wall time from its measured task chains."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from bench.model import Night, TaskOutcome

__all__ = ["chain_s", "critical_path_s", "list_schedule_s", "work_bound_s"]


def chain_s(task: TaskOutcome, latency_factor: float = 1.0, overhead_s: float = 0.0) -> float:
    """One task's chain: its provider latency (times `latency_factor`), its test time and
    `overhead_s` per attempt. A task's steps are sequential, so no schedule beats this."""
    return task.latency_s * latency_factor + task.test_s + overhead_s * task.attempts


def critical_path_s(night: Night, latency_factor: float = 1.0, overhead_s: float = 0.0) -> float:
    """The longest task chain: no concurrency can finish the night sooner."""
    return max((chain_s(t, latency_factor, overhead_s) for t in night.tasks), default=0.0)


def work_bound_s(night: Night, concurrency: int) -> float:
    """max(critical path, total chain time / concurrency): the tighter lower bound."""
    total = sum(chain_s(t) for t in night.tasks)
    return max(critical_path_s(night), total / concurrency)


def list_schedule_s(chains: Sequence[float], concurrency: int) -> float:
    """Makespan of the chains taken in order by `concurrency` workers (a thread pool's order).
    Ignores contention for CPU and test slots: a projection, not a measurement."""
    free = [0.0] * concurrency
    heapq.heapify(free)
    end = 0.0
    for chain in chains:
        start = heapq.heappop(free)
        end = max(end, start + chain)
        heapq.heappush(free, start + chain)
    return end
