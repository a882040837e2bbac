"""BestTracker: the ratchet that keeps the best attempt and never ships a worse one."""

from __future__ import annotations

from dataclasses import dataclass

from harness.results import Seed, TestResult

__all__ = ["Best", "BestTracker", "score"]


def score(result: TestResult) -> tuple[int, int, int, int]:
    """Ordering key: more passes; on a tie fewer errors (worse than failures), then failures,
    then fewer calls that differ from the reference (the differential check)."""
    found = result.differential
    return (result.passed, -result.errors, -result.failed, -found.differed if found else 0)


@dataclass(frozen=True)
class Best:
    attempt: int  # 0: a candidate from before this run, described by `seed`
    code: str
    result: TestResult
    seed: Seed | None = None


class BestTracker:
    """Tracks the high-water mark across attempts. Ties keep the earlier attempt."""

    def __init__(self, best: Best | None = None) -> None:
        self._best = best

    @property
    def best(self) -> Best | None:
        return self._best

    def update(self, attempt: int, code: str, result: TestResult) -> bool:
        """Record an attempt; True when it is the new best. A tampered run never is."""
        if result.tampered:
            return False
        if self._best is not None and score(result) <= score(self._best.result):
            return False
        self._best = Best(attempt, code, result)
        return True

    def is_regression(self, result: TestResult) -> bool:
        """True when `result` is strictly worse than the best so far."""
        return self._best is not None and score(result) < score(self._best.result)
