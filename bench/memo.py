"""Test results remembered across the outcome nights of one bench run.

A test run is a pure function of the task's tests and the candidate's code, and the simulator
is seeded per (seed, task, attempt, step, starting code): the policies of one seed reach the
same code for the same task again and again (every first write, for a start). The outcome
nights measure pass rates and costs, which depend only on each run's result, so they take a
result this bench run already measured for byte-identical tests and code instead of running
the sandbox again. The timed nights never do: their test time is part of what they measure.

The first `verify` hits of each memo are run anyway and compared with the remembered result;
a difference (a flaky test, a result that depends on more than the inputs) is reported in the
results' checks and fails the bench."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

from harness.tasks import TaskSpec

__all__ = ["Memo", "pytest_verdict", "sandbox_verdict"]

R = TypeVar("R")


def _files(spec: TaskSpec) -> list[Path]:
    """The tests, hidden tests and support files (a support entry may be a folder), in order."""
    found: list[Path] = []
    for path in (*spec.tests, *spec.hidden_tests, *spec.support):
        found += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return found


def _key(spec: TaskSpec, code: str) -> tuple[str, str]:
    """The inputs of a test run: the files and the code, not the task's id, so that the
    replicas of one example task (bench/workspace.py) share what one of them measured. A
    shared result's tracebacks may name another replica's output path: the same length (ids
    differ in a two-digit suffix), so the same tokens, and the verdict is the same."""
    digest = hashlib.sha256()
    for path in _files(spec):
        digest.update(str(path.relative_to(spec.base_dir)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    digest.update(code.encode())
    return spec.output_rel.name, digest.hexdigest()


def sandbox_verdict(result: Any) -> Hashable:
    """What of a sandboxed run decides an outcome: each test's outcome, and the run's flags."""
    cases = tuple(sorted((c.nodeid, str(c.outcome)) for c in result.cases))
    return cases, result.tampered, result.timed_out, result.rejected, result.error is None


def pytest_verdict(result: Any) -> Hashable:
    """The same for the published loop's plain pytest run: its counts."""
    return result.passed, result.total, result.failed, result.errors


class Memo(Generic[R]):
    """Remembered results of one kind of test run; `wrap` a runner to use them."""

    def __init__(self, verdict: Callable[[R], Hashable], verify: int = 20) -> None:
        self._verdict, self._verify = verdict, verify
        self._lock = threading.Lock()
        self._results: dict[tuple[str, str], R] = {}
        self.runs = self.hits = self.verified = 0
        self.mismatches: list[str] = []

    def wrap(
        self, run: Callable[[TaskSpec, str], R], reuse: bool = True
    ) -> Callable[[TaskSpec, str], R]:
        """`run`, taking remembered results; with `reuse` false (a timed night) it always runs
        and only adds what it measured."""

        def remembered(spec: TaskSpec, code: str) -> R:
            key = _key(spec, code)
            with self._lock:
                known = self._results.get(key) if reuse else None
                check = known is not None and self.verified < self._verify
                if known is not None:
                    self.hits += 1
                    self.verified += check
            if known is not None and not check:
                return known
            fresh = run(spec, code)
            with self._lock:
                self.runs += 1
                if known is None:
                    self._results.setdefault(key, fresh)
                elif self._verdict(fresh) != self._verdict(known):
                    self.mismatches.append(spec.id)
            return fresh

        return remembered

    def known(self) -> dict[tuple[str, str], R]:
        """The results remembered so far (a copy), by key."""
        with self._lock:
            return dict(self._results)

    def learn(self, results: dict[tuple[str, str], R]) -> None:
        """Remember results measured elsewhere (another process of this bench run); a key
        already known keeps its result, as a second fresh run would."""
        with self._lock:
            for key, result in results.items():
                self._results.setdefault(key, result)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "hits": self.hits,
            "verified_hits": self.verified,
            "mismatches": list(self.mismatches),
        }
