"""`harness tasks add`: append one task to a task list, validated, keeping the file as it was.

The new entry is rendered by ruamel.yaml and spliced in as text right after the last task's
last value, indented like the existing entries, so every byte already in the file (comments,
quoting, spacing, blank lines, key order) stays exactly where it was. Where a splice does not
apply (empty or flow-style `tasks:`, a new file) or would not parse back to the intended
data, the whole document is re-dumped through ruamel.yaml's round-trip mode instead, which
keeps comments but may normalise spacing. Either way the WHOLE resulting list is validated
by `load_tasks` from a temp file in the same folder (so relative paths resolve), and only
that validated file is renamed over the original; a refused task leaves the file untouched.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)
from ruamel.yaml.util import load_yaml_guess_indent

from harness.errors import BadInput
from harness.fsio import write_atomic
from harness.tasks.load import MAX_TASK_LIST_BYTES, TASK_FIELDS, TaskListError, load_tasks
from harness.tasks.spec import TaskSpec
from harness.tasks.yamlfile import YamlError, read_yaml

__all__ = ["add_task"]

_BUILTIN = {
    f.name: f.default for f in dataclasses.fields(TaskSpec) if f.default is not dataclasses.MISSING
}


def add_task(
    file: Path,
    fields: Mapping[str, Any],
    known_types: Collection[str],
    check_write: Callable[[Path], str | None] | None = None,
) -> None:
    """Append the task given by `fields` to the task list `file`, or raise BadInput and change
    nothing; `known_types` are the prompt sets a task's `type:` may name; `check_write` is
    the guardrails' write check `tasks validate` applies, so an added task always validates."""
    path = Path(file).resolve()
    if not path.parent.is_dir():
        raise BadInput(f"{path.parent} does not exist; create the task list's folder first")
    if path.exists() or path.is_symlink():
        try:  # first what would hang or crash ruamel: a FIFO, huge or deep files, non-UTF-8
            read_yaml(path, what="task list", max_bytes=MAX_TASK_LIST_BYTES)
        except YamlError as exc:
            raise BadInput(f"{exc}; nothing was added") from None
    original = path.read_bytes() if path.exists() else None
    text = original.decode("utf-8") if original is not None else ""
    doc = _load(path, text)
    entry = _entry(fields, doc.get("defaults"))
    candidate = _splice(text, entry) or _redump(text, doc, entry)
    _install(path, candidate, original, str(fields["id"]), known_types, check_write)


def _yaml() -> YAML:
    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 4096  # never re-wrap an operator's long lines
    return rt


def _load(path: Path, text: str) -> CommentedMap:
    """The round-trip document; a file that cannot be read as a task list is refused with
    the validator's own message."""
    try:
        doc = _yaml().load(text) if text.strip() else CommentedMap()
    except YAMLError as exc:
        raise BadInput(_validation_message(path, exc)) from exc
    if not isinstance(doc, CommentedMap) or not isinstance(doc.get("tasks", []), list | None):
        raise BadInput(_validation_message(path, None))
    return doc


def _validation_message(path: Path, exc: Exception | None) -> str:
    try:
        load_tasks(path)
    except TaskListError as err:
        return f"{path} is not a valid task list; nothing was added:\n{err}"
    return f"{path}: cannot edit this file: {exc or 'expected a mapping with a tasks: list'}"


def _same(value: Any, default: Any) -> bool:
    def norm(v: Any) -> Any:
        return [v] if isinstance(v, str) else list(v) if isinstance(v, list | tuple) else v

    return default is not None and norm(value) == norm(default)


def _entry(fields: Mapping[str, Any], defaults: Any) -> dict[str, Any]:
    """The given fields in the usual key order; single-item lists as scalars; a value equal to
    the file's default (or the built-in one) is left out rather than duplicated."""
    defaults = defaults if isinstance(defaults, Mapping) else {}
    entry: dict[str, Any] = {}
    for name in TASK_FIELDS:
        value = fields.get(name)
        if value is None:
            continue
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if name != "id" and _same(value, defaults.get(name, _BUILTIN.get(name))):
            continue
        entry[name] = value
    return entry


def _scalar(value: Any) -> Any:
    """ruamel writes YAML 1.2, where `yes`/`on` are plain strings; load_tasks reads YAML 1.1,
    where they are booleans. Quote whatever 1.1 would not read back as the same string."""
    if not isinstance(value, str):
        return value
    if not all(c == "\n" or c.isprintable() for c in value):
        return DoubleQuotedScalarString(value)  # the one style that escapes control characters
    if "\n" in value:
        return LiteralScalarString(value)
    try:
        same = yaml.safe_load(value) == value
    except yaml.YAMLError:
        same = False
    return value if same else SingleQuotedScalarString(value)


def _node(entry: dict[str, Any]) -> CommentedMap:
    node = CommentedMap()
    for key, value in entry.items():
        if isinstance(value, list):
            value = CommentedSeq(_scalar(v) for v in value)
            value.fa.set_flow_style()
        node[key] = _scalar(value)
    return node


def _render(entry: dict[str, Any]) -> list[str]:
    out = io.StringIO()
    _yaml().dump(_node(entry), out)
    return out.getvalue().splitlines()


def _last_leaf(node: yaml.Node) -> yaml.Node:
    if isinstance(node, yaml.MappingNode) and node.value and not node.flow_style:
        return _last_leaf(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return _last_leaf(node.value[-1])
    return node


def _splice(text: str, entry: dict[str, Any]) -> str | None:
    """The file with the entry inserted after the last task, or None where that cannot work."""
    try:
        root = yaml.compose(text)
        tasks = next(v for k, v in root.value if k.value == "tasks")
    except (yaml.YAMLError, AttributeError, StopIteration, TypeError):
        return None
    if not isinstance(tasks, yaml.SequenceNode) or tasks.flow_style or not tasks.value:
        return None
    last = tasks.value[-1]
    lines = text.splitlines()
    key_col, dash_line = last.start_mark.column, lines[last.start_mark.line]
    dash_col = dash_line.rfind("-", 0, key_col)
    if not isinstance(last, yaml.MappingNode) or dash_col < 0 or dash_line[:dash_col].strip():
        return None
    end = _last_leaf(last).end_mark
    at = end.index if end.column == 0 else _line_end(text, end.index)
    blank = _blank_separated(lines, last.start_mark.line)
    newline = "\r\n" if "\r\n" in text else "\n"  # the file's own line ends
    rendered = _rendered_item(entry, dash_col, key_col, blank).replace("\n", newline)
    head = text[:at] if text[:at].endswith("\n") else text[:at] + newline
    candidate = head + rendered + text[at:]
    return candidate if _parses_to(candidate, text, entry) else None


def _line_end(text: str, index: int) -> int:
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _blank_separated(lines: list[str], item_line: int) -> bool:
    """Whether entries are set apart by a blank line (comments just above an entry skipped)."""
    above = item_line - 1
    while above > 0 and lines[above].lstrip().startswith("#"):
        above -= 1
    return item_line > 1 and above > 0 and not lines[above].strip()


def _rendered_item(entry: dict[str, Any], dash_col: int, key_col: int, blank: bool) -> str:
    first, *rest = _render(entry)
    out = [" " * dash_col + "-" + " " * (key_col - dash_col - 1) + first]
    out += [" " * key_col + line if line else line for line in rest]
    return ("\n" if blank else "") + "\n".join(out) + "\n"


def _parses_to(candidate: str, original: str, entry: dict[str, Any]) -> bool:
    try:
        expected = yaml.safe_load(original)
        expected["tasks"].append(entry)
        return bool(yaml.safe_load(candidate) == expected)
    except (yaml.YAMLError, TypeError, KeyError, AttributeError):
        return False


def _redump(text: str, doc: CommentedMap, entry: dict[str, Any]) -> str:
    """Whole-document round trip, indented as the file was (or ruamel's default for a new one)."""
    rt = _yaml()
    if text.strip():
        _, indent, offset = load_yaml_guess_indent(text)
        rt.indent(mapping=indent or 2, sequence=indent or 2, offset=offset or 0)
    else:
        rt.indent(mapping=2, sequence=4, offset=2)
    if not isinstance(doc.get("tasks"), list) or not doc["tasks"]:
        doc["tasks"] = CommentedSeq()
    doc["tasks"].append(_node(entry))
    out = io.StringIO()
    rt.dump(doc, out)
    return out.getvalue()


def _install(
    path: Path,
    candidate: str,
    original: bytes | None,
    task_id: str,
    known_types: Collection[str],
    check_write: Callable[[Path], str | None] | None,
) -> None:
    """Validate `candidate` as a temp file beside `path`, then rename that very file over it."""

    def verify(tmp: Path) -> None:
        _validate(tmp, path, task_id, known_types, check_write)
        current = path.read_bytes() if path.exists() else None
        if current != original:
            raise BadInput(f"{path} changed while the task was being added; run the command again")

    write_atomic(path, candidate, verify=verify)


def _validate(
    tmp: Path,
    path: Path,
    task_id: str,
    known_types: Collection[str],
    check_write: Callable[[Path], str | None] | None,
) -> None:
    try:
        load_tasks(tmp, known_types=known_types, check_write=check_write)
    except TaskListError as exc:
        problems = "\n".join(
            str(dataclasses.replace(p, file=path, message=p.message.replace(tmp.name, path.name)))
            for p in exc.problems
        )
        raise BadInput(
            f"{len(exc.problems)} problem(s); task {task_id!r} was not added and {path} is"
            f" unchanged (line numbers are as if it had been):\n{problems}"
        ) from exc
