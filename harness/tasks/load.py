"""Load and validate a task list; every problem at once, each with file, line, task, field, fix."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from yaml.nodes import Node, SequenceNode

from harness.extract import LANGUAGES
from harness.tasks.across import Checked, check_ids, check_outputs, check_types
from harness.tasks.build import build_spec
from harness.tasks.language import CommandCheck, check_runner
from harness.tasks.paths import Paths
from harness.tasks.schema import (
    NOT_DEFAULTABLE,
    PLACEHOLDER,
    TASK_FIELDS,
    TaskModel,
    explain,
    merge_defaults,
    suggest,
)
from harness.tasks.spec import ISOLATION_DEFAULT, TaskSpec
from harness.tasks.yamlfile import YamlDoc, YamlError, key_lines, read_yaml

__all__ = [
    "MAX_TASK_LIST_BYTES",
    "TASK_FIELDS",
    "Problem",
    "TaskListError",
    "declared_read_roots",
    "load_tasks",
]

MAX_TASK_LIST_BYTES = 8 * 2**20  # ~17,000 tasks; a 1,000-task list is under 0.5 MiB
_TOP_LEVEL = ("defaults", "tasks", "read_roots")
_TESTS = ("tests", "hidden_tests", "support")  # what pytest collects or imports: must parse
_INPUTS = ("reference", "tests", "hidden_tests", "examples", "capabilities", "solution", "support")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a task list, located precisely enough to fix without searching."""

    file: Path
    line: int
    task_id: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"task {self.task_id!r}" if self.task_id else "task list"
        field = f", field {self.field!r}" if self.field else ""
        line = f":{self.line}" if self.line else ""  # 0: about the file as a whole
        return f"{self.file}{line}: {where}{field}: {self.message}"


class TaskListError(ValueError):
    """The task list is invalid; carries every problem found, sorted by line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(dict.fromkeys(problems), key=lambda p: p.line)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass
class _Pass:
    """One validation pass over one file: what was read, and every problem found so far."""

    path: Path
    doc: YamlDoc
    paths: Paths
    problems: list[Problem] = field(default_factory=list)
    check_command: CommandCheck | None = None

    def add(self, line: int, task_id: str, name: str, message: str) -> None:
        self.problems.append(Problem(self.path, line, task_id, name, message))


def load_tasks(
    path: Path,
    *,
    known_types: Iterable[str] | None = None,
    check_write: Callable[[Path], str | None] | None = None,
    guarded: Mapping[Path, str] | None = None,
    check_command: CommandCheck | None = None,
) -> list[TaskSpec]:
    """Load `path`, validate every task, and return them in file order.

    Raises TaskListError listing every problem found (nothing is partially returned).
    `known_types`: the task types that have prompts; `check_write(output)`: why the harness
    may not write there (the guardrails' write roots), or None; `guarded`: other input files
    (config, policy) no output may overwrite, each with its name for messages;
    `check_command(argv)`: why the guardrails forbid a task's test_command, or None.
    """
    path = Path(path)
    try:
        doc = read_yaml(path, what="task list", max_bytes=MAX_TASK_LIST_BYTES)
    except YamlError as exc:
        raise TaskListError([Problem(path, exc.line, "", "", exc.message)]) from None
    base = path.parent.resolve()
    run = _Pass(path, doc, Paths(base, path.name), check_command=check_command)
    items = _top_level(run)
    run.paths = Paths(base, path.name, _read_roots(run, doc.data.get("read_roots")))
    defaults, bad = _defaults(run)
    types = set(known_types) if known_types is not None else None
    tasks = [t for i, item in enumerate(items) if (t := _task(run, i, item, defaults, bad))]
    add = run.add
    check_types(add, tasks, types, run.doc.line("defaults", "type"))
    check_ids(add, [(_id_of(item, i), *_lines(node)) for i, (item, node) in _entries(run, items)])
    check_outputs(add, tasks, check_write, {path.resolve(): "the task list", **(guarded or {})})
    if run.problems:
        raise TaskListError(run.problems)
    return [t.spec for t in tasks]


def _top_level(run: _Pass) -> list[Any]:
    """The `tasks:` entries; also reports duplicate keys and unknown top-level keys."""
    raw, doc = run.doc.data, run.doc
    nodes = _items(doc.node("tasks"))
    for dup in doc.duplicates:
        index = next((i for i, n in enumerate(nodes) if n is dup.mapping), None)
        task_id = _id_of(raw["tasks"][index], index) if index is not None else ""
        run.add(dup.line, task_id, dup.key, dup.message)
    if not isinstance(raw, dict) or not isinstance(raw.get("tasks"), list):
        msg = "expected a mapping with a 'tasks:' list (see tasks/example/tasks.yaml)"
        if raw is None:
            msg = "the file is empty; add a 'tasks:' list (see tasks/example/tasks.yaml)"
        run.add(doc.line("tasks"), "", "tasks", msg)
        raise TaskListError(run.problems)
    for key in raw:
        if key not in _TOP_LEVEL:
            run.add(doc.line(key), "", str(key), suggest(key, _TOP_LEVEL, "top-level key"))
    if not raw["tasks"]:
        run.add(doc.line("tasks"), "", "tasks", "the task list is empty; add a task")
    return raw["tasks"]


def _items(node: Node | None) -> list[Node]:
    return node.value if isinstance(node, SequenceNode) else []


def _entries(run: _Pass, items: list[Any]) -> Iterator[tuple[int, tuple[Any, Node]]]:
    """Each `tasks:` entry with its node (for lines); the node list is never shorter."""
    return enumerate(zip(items, _items(run.doc.node("tasks")), strict=False))


def _lines(node: Node) -> tuple[int, int]:
    """The entry's line and its `id:` key's line."""
    line = node.start_mark.line + 1
    return line, key_lines(node).get("id", line)


def _id_of(item: Any, index: int) -> str:
    """The task's id as written (shortened for messages), or its position in the list."""
    value = item.get("id") if isinstance(item, dict) else None
    text = str(value) if value is not None else f"#{index + 1}"
    return text if len(text) <= 64 else text[:61] + "..."


def declared_read_roots(path: Path) -> tuple[Path, ...]:
    """The `read_roots:` of a task list that `load_tasks` accepted, resolved (context tools
    read under them); folders that do not resolve are left out."""
    path = Path(path)
    base = path.parent.resolve()
    value = read_yaml(path, what="task list", max_bytes=MAX_TASK_LIST_BYTES).data.get("read_roots")
    values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    found = (Paths(base, path.name).resolve(v) for v in values if isinstance(v, str) and v)
    return tuple(p for p in found if isinstance(p, Path) and p.is_dir())


def _read_roots(run: _Pass, value: Any) -> tuple[Path, ...]:
    """Folders outside the task list's own that inputs may be read from (explicit, listed)."""
    if value is None:
        return ()
    line = run.doc.line("read_roots")
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        run.add(line, "", "read_roots", "expected a folder or a list of folders")
        return ()
    roots = []
    for rel in values:
        target = run.paths.resolve(rel)
        if isinstance(target, str) or not target.is_dir():
            run.add(line, "", "read_roots", f"{rel!r} is not a folder; fix the path")
        else:
            roots.append(target)
    return tuple(roots)


def _defaults(run: _Pass) -> tuple[dict[str, Any], set[str]]:
    """The valid `defaults:` entries, and the names of the invalid ones (reported once here)."""
    raw = run.doc.data.get("defaults")
    line = run.doc.line("defaults")
    if raw is None:
        return {}, set()
    if not isinstance(raw, dict):
        run.add(line, "", "defaults", "expected a mapping of task fields")
        return {}, set()
    lines = key_lines(run.doc.node("defaults"))
    bad = {k for k in raw if k in NOT_DEFAULTABLE}
    for key in bad:
        run.add(
            lines[key], "", f"defaults.{key}", "each task needs its own; move it into the tasks"
        )
    try:
        TaskModel.model_validate({**PLACEHOLDER, **{k: v for k, v in raw.items() if k not in bad}})
    except ValidationError as exc:
        for name, message in explain(exc):
            bad.add(name)
            run.add(lines.get(name, line), "", f"defaults.{name}", message)
    return {k: v for k, v in raw.items() if k not in bad}, bad


def _task(
    run: _Pass, index: int, item: Any, defaults: dict[str, Any], bad: set[str]
) -> Checked | None:
    node = _items(run.doc.node("tasks"))[index]
    line = node.start_mark.line + 1
    task_id = _id_of(item, index)
    if not isinstance(item, dict) or not item:
        msg = "each task must be a mapping with at least id, reference, tests and output"
        run.add(line, task_id, "", msg)
        return None
    own = key_lines(node)
    merged = merge_defaults(defaults, item)
    try:
        model = TaskModel.model_validate(merged)
    except ValidationError as exc:
        named = set()
        for name, message in explain(exc):
            named.add(name)
            if name not in bad or name in item:  # a bad default was reported at its own line
                run.add(own.get(name, line), task_id, name, message)
        _check_inputs(run, task_id, _input_fields(merged, named), item, own)  # the same pass
        return None
    inputs = _check_inputs(run, model.id, _Fields.of(model), item, own)
    for name, message in _selectable_and_hidden(run.paths, model):
        run.add(own.get(name, line), model.id, name, message)
    runner = check_runner(model, _sayer(run, model.id, item, own, line), run.check_command)
    language = LANGUAGES.get(model.language)
    if "isolation" in item and language is not None and language.name not in _ISOLATED:
        run.add(own.get("isolation", line), model.id, "isolation", (
            f"applies to Python, JavaScript and TypeScript tasks only (where the candidate may "
            f"run behind a boundary); a {language.title} candidate runs in its tests' own "
            "process: remove isolation:"
        ))  # fmt: skip
    output, problems = run.paths.check_output(model.output, LANGUAGES.get(model.language))
    for message in problems:
        run.add(own.get("output", line), model.id, "output", message)
    if runner is None:
        return None
    return Checked(build_spec(run.paths, run.path, model, output, line, runner), own, inputs)


def _selectable_and_hidden(paths: Paths, model: TaskModel) -> Iterator[tuple[str, str]]:
    """An id the CLI cannot name (`--only -rf` is read as a flag), and hidden tests that are
    also the visible tests (then nothing is hidden, and the hidden score means nothing)."""
    if model.id.startswith("-"):
        yield "id", (
            f"{model.id!r} starts with '-', so `--only {model.id}` would be read as a flag; "
            "start the id with a letter, digit or _"
        )
    visible = {paths.resolve(t) for t in model.tests}
    both = [h for h in model.hidden_tests if paths.resolve(h) in visible]
    if both:
        yield "hidden_tests", (
            f"{', '.join(both)} is also in tests:, so it is shown to the model and not hidden; "
            "list each test file in one of the two"
        )


def _sayer(run: _Pass, task_id: str, item: dict[str, Any], own: Mapping[str, int], line: int):
    """Reports a field's problem at the task's own key, or once at the default it came from."""

    def say(name: str, message: str) -> None:
        if name in item or name not in (run.doc.data.get("defaults") or {}):
            run.add(own.get(name, line), task_id, name, message)
        else:
            run.add(run.doc.line("defaults", name), "", f"defaults.{name}", message)

    return say


def _input_fields(merged: Mapping[str, Any], named: set[str]) -> _Fields:
    """The input fields of a task whose schema failed elsewhere, those that are paths: their
    files are still checked, so one pass reports both kinds of problem."""

    def paths(name: str) -> Any:
        value = merged.get(name)
        listed = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return value if (isinstance(value, str) or listed) and name not in named else None

    language, isolation = merged.get("language", "python"), merged.get("isolation")
    return _Fields(
        language if isinstance(language, str) else "",
        isolation if isinstance(isolation, str) else None,
        {name: paths(name) for name in _INPUTS},
    )


@dataclass(frozen=True)
class _Fields:
    """What _check_inputs reads of a task: its language, isolation and input paths."""

    language: str
    isolation: str | None
    values: Mapping[str, Any]

    @classmethod
    def of(cls, model: TaskModel) -> _Fields:
        return cls(model.language, model.isolation, {n: getattr(model, n) for n in _INPUTS})


# The languages whose candidates may run behind a value boundary (`isolation:` applies).
_ISOLATED = frozenset({"python", "javascript", "typescript"})


def _check_inputs(
    run: _Pass, task_id: str, model: _Fields, item: dict[str, Any], own: Mapping[str, int]
) -> dict[Path, str]:
    """Every input file of the task, checked; a default's problem is reported at its line."""
    inputs: dict[Path, str] = {}
    language = LANGUAGES.get(model.language)
    is_python = language is not None and language.is_python
    for name in _INPUTS:
        value = model.values[name]
        for rel in value if isinstance(value, list) else [value] if value else []:
            mine = name in item and rel in _listed(item[name])
            problem = run.paths.check_input(
                rel,
                folder_ok=name == "support",
                shown=name != "support",
                python=is_python and name in _TESTS,
                boundary=(model.isolation or ISOLATION_DEFAULT) == "boundary",
            )
            if problem and mine:
                run.add(own[name], task_id, name, problem)
            elif problem:
                run.add(run.doc.line("defaults", name), "", f"defaults.{name}", problem)
            target = run.paths.resolve(rel)
            if isinstance(target, Path):
                inputs.setdefault(target, name)
    return inputs


def _listed(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else value if isinstance(value, list) else []
