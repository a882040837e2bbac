"""Whether a Python task's tests can be collected at all, before anything is spent.

The tests are collected (never run) in the sandbox, in the task's own isolation mode, against a
stub candidate the harness generates from the names the tests import from the output module:
functions of those names (so `gcd.__name__` reads `"gcd"`) that raise NotImplementedError when
called, classes that accept anything and can be raised, subclassed or instantiated, constants
that are inert values, and a module `__getattr__` for names reached dynamically. A test file
that still fails to collect fails for a reason of its own (a syntax error, a missing library,
support file or data file): an input error, named by file, line and cause. A failure raised
inside the stub (the tests call the candidate while being collected) says nothing about the
tests and is not reported. Nor is a failure the task's Python reference does not have: a
test file that cannot be collected against the stub is collected again against the reference
(the module the port is of, run as a candidate would be), and one that collects there failed
only because the stub is not the module (a support module adding the candidate's string
constants at import, a test building a `datetime` with the candidate's `tzinfo`); the night
takes its test ids from its own collection. Each answer is remembered by content
(remembered.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from harness.tasks import TaskSpec
from harness.testrun.limits import TestLimits
from harness.testrun.remembered import content_key, remembered
from harness.testrun.run import boundary_for, sandbox_kind
from harness.testrun.score import CollectError
from harness.testrun.scratch import Pristine, candidate_place, read_pristine
from harness.testrun.session import Run, launch_all
from harness.testrun.stub import python_reference, stub_for

__all__ = ["Uncollectable", "collection_problems", "problems_text"]


@dataclass(frozen=True)
class Uncollectable:
    """A test file that cannot be collected, where and why."""

    path: str  # relative to the task list's folder
    line: int | None
    cause: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: cannot be collected: {self.cause}"


def collection_problems(
    task: TaskSpec, limits: TestLimits | None = None, guard=None
) -> list[Uncollectable]:
    """The task's test files that cannot be collected against the stub candidate, nor against
    a Python reference when the task has one; none for a task with its own test command (its
    runner has no collection to ask)."""
    if task.language != "python" or task.test_command:
        return []
    limits = limits or TestLimits()
    kind = sandbox_kind(limits)
    pristine = read_pristine(task)
    place = candidate_place(task, pristine)
    reference = python_reference(task.reference)
    code = stub_for(pristine, task.module_name, reference)
    boundary = boundary_for(task, kind)
    key = content_key(pristine.digest, pristine.tests, place, code, reference, kind, str(boundary))

    def collect() -> list[list]:
        run = Run(
            pristine,
            place,
            code,
            limits,
            kind,
            collect_only=True,
            command_guard=guard,
            boundary=boundary,
        )
        problems = _collect(run)
        if problems and reference:
            problems = _also_against(run, reference, problems)
        return [[p.path, p.line, p.cause] for p in problems]

    return [Uncollectable(p, n, c) for p, n, c in remembered("collectable", key, collect)]


def _tests(pristine: Pristine) -> list[tuple[str, bytes]]:
    return [(rel, data) for rel, data in pristine.files if rel.startswith(pristine.tests)]


def _collect(run: Run) -> list[Uncollectable]:
    tally = launch_all(run)
    if tally.tamper or not tally.collected_ok:
        output = "\n".join(tally.outputs).strip().splitlines()
        cause = output[-1] if output else "pytest did not finish collecting"
        return [Uncollectable(run.pristine.tests[0], None, cause[:400])]
    stub = PurePosixPath(run.candidate_rel).name
    problems = []
    for error in tally.collect_errors:
        if _through(stub, error.details):
            continue  # raised inside the stub: the tests call the candidate while collected
        problems.append(_problem(run, error))
    return problems


def _also_against(run: Run, reference: str, problems: list[Uncollectable]) -> list[Uncollectable]:
    """Of the problems against the stub, those of test files that cannot be collected against
    the reference either, each as the reference's collection names it (the stub's account
    stands where the reference fails in its own code, or its collection does not finish)."""
    tally = launch_all(replace(run, code=reference))
    if tally.tamper or not tally.collected_ok:
        return problems
    against_stub = {p.path: p for p in problems}
    module = PurePosixPath(run.candidate_rel).name
    found: dict[str, Uncollectable] = {}
    for error in tally.collect_errors:
        path = error.id.split("::")[0] or run.pristine.tests[0]
        if path in against_stub and path not in found:
            own = _through(module, error.details)  # the reference's own failure, not the tests'
            found[path] = against_stub[path] if own else _problem(run, error)
    return list(found.values())


def _problem(run: Run, error: CollectError) -> Uncollectable:
    path = error.id.split("::")[0] or run.pristine.tests[0]
    return Uncollectable(path, _line(path, error.details), _cause(error))


def _through(stub: str, details: str) -> bool:
    """Whether a collection traceback has a frame in the stub candidate's file."""
    return (
        re.search(rf"(?:^|[/\s\"]){re.escape(stub)}(?::\d+|\", line \d+)", details, re.M)
        is not None
    )


def _line(path: str, details: str) -> int | None:
    """The last line of the test file that the traceback names (a syntax error's included)."""
    name = re.escape(PurePosixPath(path).name)
    found = re.findall(rf"{name}:(\d+)", details) or re.findall(rf"{name}\", line (\d+)", details)
    return int(found[-1]) if found else None


def _cause(error: object) -> str:
    """The exception pytest reported (its `E   ` lines), else its message."""
    details, msg = error.details, error.msg  # type: ignore[attr-defined]
    said = [s[1:].strip() for s in details.splitlines() if s.startswith("E ")]
    said = [s for s in said if s]
    cause = said[-1] if said else (msg.strip().splitlines() or ["unknown error"])[-1]
    return cause[:400]


def problems_text(task: TaskSpec, problems: Sequence[Uncollectable]) -> list[str]:
    """One line per problem, each naming the task list entry, for a BadInput or a listing."""
    where = f"{task.source}:{task.line}: " if task.source else ""
    return [
        f"{where}task {task.id}: {p} (fix the test file, or add the files and libraries it "
        "needs to `support` and the environment)"
        for p in problems
    ]
