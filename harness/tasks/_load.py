"""Load and validate a task list; every error names file, line, task id, field and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.tasks.spec import TaskSpec

__all__ = ["TASK_FIELDS", "Problem", "TaskListError", "load_tasks"]

_ID_PATTERN = r"^[A-Za-z0-9_-]+$"


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class _TaskModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(pattern=_ID_PATTERN)
    reference: list[str] = Field(min_length=1)
    tests: list[str] = Field(min_length=1)
    output: str
    type: str = Field(default="service_port", pattern=_ID_PATTERN)
    examples: list[str] = []
    capabilities: str | None = None
    support: list[str] = []
    hidden_tests: list[str] = []
    instructions: str = ""
    max_attempts: int = Field(default=5, ge=1, le=50)
    solution: str | None = None

    _lists = field_validator(
        "reference", "tests", "examples", "support", "hidden_tests", mode="before"
    )(_as_list)


TASK_FIELDS = tuple(_TaskModel.model_fields)
_FILE_FIELDS = ("reference", "tests", "hidden_tests", "examples", "capabilities", "solution")


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
        return f"{self.file}:{self.line}: {where}{field}: {self.message}"


class TaskListError(ValueError):
    """The task list is invalid; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass(frozen=True)
class _Entry:
    data: dict[str, Any]
    line: int
    key_lines: dict[str, int]


def _key_lines(node: yaml.Node) -> dict[str, int]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(k.value): k.start_mark.line + 1 for k, _ in node.value}


def _read(path: Path) -> tuple[Any, yaml.Node | None]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise TaskListError([Problem(path, 0, "", "", f"cannot read: {exc.strerror}")]) from exc
    try:
        return yaml.safe_load(text), yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 0
        raise TaskListError([Problem(path, line, "", "", f"not valid YAML: {exc}")]) from exc


def _child(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == key:
                return v
    return None


def _entries(path: Path, raw: Any, root: yaml.Node | None) -> tuple[dict, list[_Entry]]:
    if not isinstance(raw, dict) or not isinstance(raw.get("tasks"), list):
        msg = "expected a mapping with a 'tasks:' list (see tasks/example/tasks.yaml)"
        raise TaskListError([Problem(path, 1, "", "tasks", msg)])
    problems = [
        Problem(
            path,
            _key_lines(root).get(k, 1),
            "",
            k,
            "unknown top-level key; use 'defaults' or 'tasks'",
        )
        for k in raw
        if k not in ("defaults", "tasks")
    ]
    defaults = raw.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.append(Problem(path, 1, "", "defaults", "expected a mapping of task fields"))
        defaults = {}
    if problems:
        raise TaskListError(problems)
    seq = _child(root, "tasks")
    nodes = seq.value if isinstance(seq, yaml.SequenceNode) else []
    entries = []
    for i, item in enumerate(raw["tasks"]):
        node = nodes[i] if i < len(nodes) else None
        line = node.start_mark.line + 1 if node is not None else 0
        entries.append(_Entry(item if isinstance(item, dict) else {}, line, _key_lines(node)))
    return defaults, entries


def _suggest(key: str) -> str:
    close = difflib.get_close_matches(key, TASK_FIELDS, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(TASK_FIELDS)}"
    return f"unknown key; {hint}"


def _validation_problems(path: Path, entry: _Entry, task_id: str, exc: ValidationError):
    for err in exc.errors():
        field = str(err["loc"][0]) if err["loc"] else ""
        line = entry.key_lines.get(field, entry.line)
        if err["type"] == "extra_forbidden":
            yield Problem(path, line, task_id, field, _suggest(field))
        elif err["type"] == "missing":
            yield Problem(path, entry.line, task_id, field, "required field is missing; add it")
        else:
            got = err.get("input")
            yield Problem(path, line, task_id, field, f"{err['msg']} (got {got!r})")


def _paths(base: Path, values: Iterable[str]) -> tuple[Path, ...]:
    return tuple((base / v).resolve() for v in values)


def _file_problems(path: Path, entry: _Entry, model: _TaskModel) -> list[Problem]:
    base = path.parent.resolve()
    problems = []
    for field in (*_FILE_FIELDS, "support"):
        value = getattr(model, field)
        for rel in value if isinstance(value, list) else [value] if value else []:
            target = (base / rel).resolve()
            missing = not target.exists() if field == "support" else not target.is_file()
            if missing:
                line = entry.key_lines.get(field, entry.line)
                msg = (
                    f"{rel!r} does not exist (looked for {target}); "
                    f"fix the path, relative to {path.name}"
                )
                problems.append(Problem(path, line, model.id, field, msg))
    output = (base / model.output).resolve()
    if output.suffix != ".py" or not output.stem.isidentifier():
        msg = f"{model.output!r} must be a .py file whose name is a valid module name"
        problems.append(
            Problem(path, entry.key_lines.get("output", entry.line), model.id, "output", msg)
        )
    return problems


def _spec(path: Path, entry: _Entry, model: _TaskModel) -> TaskSpec:
    base = path.parent.resolve()
    return TaskSpec(
        id=model.id,
        base_dir=base,
        reference=_paths(base, model.reference),
        tests=_paths(base, model.tests),
        output=(base / model.output).resolve(),
        type=model.type,
        examples=_paths(base, model.examples),
        capabilities=(base / model.capabilities).resolve() if model.capabilities else None,
        support=_paths(base, model.support),
        hidden_tests=_paths(base, model.hidden_tests),
        instructions=model.instructions,
        max_attempts=model.max_attempts,
        solution=(base / model.solution).resolve() if model.solution else None,
        source=path.resolve(),
        line=entry.line,
    )


def load_tasks(path: Path, *, known_types: Iterable[str] | None = None) -> list[TaskSpec]:
    """Load `path`, validate every task, and return them in file order.

    Raises TaskListError listing every problem found (nothing is partially returned).
    `known_types`, when given, is the set of task types that have prompts.
    """
    path = Path(path)
    raw, root = _read(path)
    defaults, entries = _entries(path, raw, root)
    problems: list[Problem] = []
    specs: list[TaskSpec] = []
    seen: dict[str, int] = {}
    outputs: dict[Path, str] = {}
    types = set(known_types) if known_types is not None else None
    for index, entry in enumerate(entries):
        task_id = str(entry.data.get("id", f"#{index + 1}"))
        if not entry.data:
            msg = "each task must be a mapping with at least id, reference, tests and output"
            problems.append(Problem(path, entry.line, task_id, "", msg))
            continue
        try:
            model = _TaskModel.model_validate({**defaults, **entry.data})
        except ValidationError as exc:
            problems.extend(_validation_problems(path, entry, task_id, exc))
            continue
        if model.id in seen:
            msg = f"duplicate id (first used on line {seen[model.id]}); ids must be unique"
            problems.append(
                Problem(path, entry.key_lines.get("id", entry.line), model.id, "id", msg)
            )
            continue
        seen[model.id] = entry.line
        problems.extend(_file_problems(path, entry, model))
        if types is not None and model.type not in types:
            msg = f"no prompts for type {model.type!r}; known types: {', '.join(sorted(types))}"
            problems.append(
                Problem(path, entry.key_lines.get("type", entry.line), model.id, "type", msg)
            )
        spec = _spec(path, entry, model)
        if spec.output in outputs:
            msg = f"same output as task {outputs[spec.output]!r}; each task needs its own file"
            problems.append(
                Problem(path, entry.key_lines.get("output", entry.line), model.id, "output", msg)
            )
        outputs[spec.output] = model.id
        specs.append(spec)
    if not entries:
        problems.append(Problem(path, 1, "", "tasks", "the task list is empty; add a task"))
    if problems:
        raise TaskListError(problems)
    return specs
