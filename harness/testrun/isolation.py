"""Authoring-time check of `isolation`: a task's tests against a known-good candidate, run
in_process and behind the boundary; every test whose outcome differs, and what each said.

A difference means the suite relies on something a value boundary cannot carry (identity of
returned values, shared mutable returns, a value object's own __eq__, support state shared
with the candidate): the task list then says `isolation: in_process`, or the test changes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from harness.tasks import TaskSpec
from harness.testrun.limits import TestLimits
from harness.testrun.remembered import content_key, remembered
from harness.testrun.run import run_tests, sandbox_kind
from harness.testrun.scratch import candidate_place, read_pristine

__all__ = ["Difference", "isolation_differences"]


@dataclass(frozen=True)
class Difference:
    """One test whose outcome depends on the isolation mode."""

    nodeid: str
    in_process: str  # outcome, and the message when it did not pass
    boundary: str


def _said(case: object) -> str:
    outcome, message = case.outcome.value, case.message  # type: ignore[attr-defined]
    return f"{outcome}: {message[:200]}" if message else outcome


def isolation_differences(
    task: TaskSpec, code: str, limits: TestLimits | None = None
) -> list[Difference]:
    """Run `code` (the task's solution) both ways; the tests whose outcomes differ. Once per
    content: the same tests, support, place, code and sandbox give the remembered answer."""
    pristine = read_pristine(task)
    place = candidate_place(task, pristine)
    kind = sandbox_kind(limits)
    key = content_key(pristine.digest, pristine.tests, pristine.hidden, place, code, kind)

    def differ() -> list[dict[str, str]]:
        return [asdict(d) for d in _differences(task, code, limits)]

    return [Difference(**d) for d in remembered("both-ways", key, differ)]


def _differences(task: TaskSpec, code: str, limits: TestLimits | None) -> list[Difference]:
    results = {
        mode: {
            c.nodeid: c for c in run_tests(replace(task, isolation=mode), code, limits=limits).cases
        }
        for mode in ("in_process", "boundary")
    }
    inside, behind = results["in_process"], results["boundary"]
    missing = "did not run"
    return [
        Difference(
            nodeid,
            _said(inside[nodeid]) if nodeid in inside else missing,
            _said(behind[nodeid]) if nodeid in behind else missing,
        )
        for nodeid in sorted({*inside, *behind})
        if nodeid not in inside
        or nodeid not in behind
        or inside[nodeid].outcome is not behind[nodeid].outcome
    ]
