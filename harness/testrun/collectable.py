"""Whether a Python task's tests can be collected at all, before anything is spent.

The tests are collected (never run) in the sandbox, in the task's own isolation mode, against a
stub candidate the harness generates from the names the tests import from the output module:
functions of those names (so `gcd.__name__` reads `"gcd"`) that raise NotImplementedError when
called, classes that accept anything and can be raised, subclassed or instantiated, constants
that are inert values, and a module `__getattr__` for names reached dynamically. A test file
that still fails to collect fails for a reason of its own (a syntax error, a missing library,
support file or data file): an input error, named by file, line and cause. A failure raised
inside the stub (the tests call the candidate while being collected) says nothing about the
tests and is not reported. Each answer is remembered by content (remembered.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from harness.tasks import TaskSpec
from harness.testrun.limits import TestLimits
from harness.testrun.remembered import content_key, remembered
from harness.testrun.run import boundary_for, sandbox_kind
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
    """The task's test files that cannot be collected against the stub candidate; none for a
    task with its own test command (its runner has no collection to ask)."""
    if task.language != "python" or task.test_command:
        return []
    limits = limits or TestLimits()
    kind = sandbox_kind(limits)
    pristine = read_pristine(task)
    place = candidate_place(task, pristine)
    code = stub_for(pristine, task.module_name, python_reference(task.reference))
    boundary = boundary_for(task, kind)
    key = content_key(pristine.digest, pristine.tests, place, code, kind, str(boundary))

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
        return [[p.path, p.line, p.cause] for p in _collect(run)]

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
        path = error.id.split("::")[0] or run.pristine.tests[0]
        problems.append(Uncollectable(path, _line(path, error.details), _cause(error)))
    return problems


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
