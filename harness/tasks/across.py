"""Checks across the tasks of one list: ids, prompt types, and where outputs land."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.tasks.spec import TaskSpec

__all__ = ["Add", "Checked", "check_ids", "check_outputs", "check_types"]

Add = Callable[[int, str, str, str], None]  # (line, task id, field, message)


@dataclass(frozen=True)
class Checked:
    """A task that passed the schema: its spec, its own keys' lines, the files it reads."""

    spec: TaskSpec
    own: Mapping[str, int]  # the task's own keys → their lines
    inputs: Mapping[Path, str]  # every file it reads → the field naming it

    def at(self, name: str) -> int:
        return self.own.get(name, self.spec.line)


def check_types(
    add: Add, tasks: Iterable[Checked], types: set[str] | None, default_line: int
) -> None:
    """Every task's type has prompts; a defaulted type is reported once, at its own line."""
    for task in tasks:
        if types is None or task.spec.type in types:
            continue
        msg = f"no prompts for type {task.spec.type!r}; known types: {', '.join(sorted(types))}"
        if "type" in task.own:
            add(task.own["type"], task.spec.id, "type", msg)
        else:
            add(default_line, "", "defaults.type", msg)


def check_ids(add: Add, entries: Iterable[tuple[str, int, int]]) -> None:
    """Ids are unique, also ignoring case (each names a folder, on case-insensitive disks
    too). `entries`: (id, entry line, id line) of every entry, valid or not, so a duplicate
    shows with the other problems."""
    seen: dict[str, tuple[str, int]] = {}
    for task_id, line, id_line in entries:
        first_id, first_line = seen.setdefault(task_id.casefold(), (task_id, line))
        if first_line == line:
            continue
        msg = (
            f"duplicate id (first used on line {first_line}); ids must be unique"
            if first_id == task_id
            else f"differs from task {first_id!r} (line {first_line}) only in case; "
            "ids name folders, so make them differ in more than case"
        )
        add(id_line, task_id, "id", msg)


def check_outputs(
    add: Add,
    tasks: list[Checked],
    check_write: Callable[[Path], str | None] | None,
    guarded: Mapping[Path, str],
) -> None:
    """No output is written twice (also ignoring case), inside another output, over any task's
    input or another input file, or outside the write roots; and none shares a basename with
    its own tests (the import would clash)."""
    read: dict[Path, tuple[str, str]] = {}
    for task in tasks:
        for target, name in task.inputs.items():
            read.setdefault(target, (task.spec.id, name))
    written: dict[Path, str] = {}  # each output → the first task writing it
    folded: dict[str, tuple[Path, str]] = {}  # the same, ignoring case
    for task in tasks:
        written.setdefault(task.spec.output, task.spec.id)
        folded.setdefault(str(task.spec.output).casefold(), (task.spec.output, task.spec.id))
    for task in tasks:
        output, task_id, line = task.spec.output, task.spec.id, task.at("output")
        problems = _clashes(output, task_id, written, folded)
        if output in read:
            owner, name = read[output]
            whose = "this task's" if owner == task_id else f"task {owner!r}'s"
            problems.append(
                f"is also {whose} {name} ({output}); the harness would overwrite it: write the "
                "port to a new file"
            )
        if output in guarded:
            problems.append(f"is {guarded[output]} ({output}); choose another output file")
        clash = [t for t in task.spec.tests if t.name == output.name and t != output]
        if clash:
            problems.append(
                f"has the same basename as test file {clash[0]}; tests import the candidate by "
                "basename, so rename the output"
            )
        if check_write is not None and (why := check_write(output)):
            problems.append(why)
        for message in problems:
            add(line, task_id, "output", message)


def _clashes(
    output: Path, task_id: str, written: Mapping[Path, str], folded: Mapping[str, tuple[Path, str]]
) -> list[str]:
    """Where `output` collides with another task's: the same file, the same file on a
    case-insensitive disk, or a file one task writes that another needs as a folder."""
    problems = []
    first = written[output]
    if first != task_id:
        problems.append(f"same output as task {first!r}; each task needs its own file")
    other, owner = folded[str(output).casefold()]
    if other != output:
        problems.append(
            f"differs from task {owner!r}'s output {other} only in case; on a case-insensitive "
            "disk (macOS, Windows) both are one file: make them differ in more than case"
        )
    for parent in output.parents:
        if parent in written:
            problems.append(
                f"is inside {parent}, which task {written[parent]!r} writes as a file; one of "
                "the two writes would fail after its task was paid for: choose another path"
            )
    return problems
