"""The policy file's schema, read with line numbers and merged over the shipped default.

The merge fails closed: an operator's list of rules or names extends the shipped list (an
entry equal to a shipped one, as in a copy of the shipped file, counts once); a shipped entry
goes only when `remove_shipped` names it, and a name there that is not shipped is an error.
`programs` merges by program; `write_roots` and `allowed_js_modules` are the operator's own.
"""

from __future__ import annotations

import functools
import re
import typing
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.guardrails.values import PolicyError

__all__ = ["PolicyFile", "read_policy"]

_SHIPPED_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

RuleId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
Word = Annotated[str, Field(pattern=r"^\S+$")]
_NOT_EMPTY = Field(min_length=1)


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc}); fix the pattern") from exc
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProgramSyntax(_Strict):
    value_options: list[str] = []
    skip_words: list[str] = []
    long_option_abbreviations: bool = False


class CommandRuleModel(_Strict):
    id: RuleId
    command: list[Word | list[Word]] = _NOT_EMPTY
    flags: list[str] = []
    args: list[str] = []
    unless_flags: list[str] = []
    reason: str = _NOT_EMPTY

    @field_validator("args")
    @classmethod
    def _regexes(cls, value: list[str]) -> list[str]:
        return [_regex(v) for v in value]

    @field_validator("flags", "unless_flags")
    @classmethod
    def _dashed(cls, value: list[str]) -> list[str]:
        for spec in value:
            bad = [f for req in spec.split() for f in req.split("|") if not f.startswith("-")]
            if bad or not spec.strip():
                raise ValueError(f"{spec!r}: flags start with '-', e.g. '-f|--force'")
        return value


class CallRuleModel(_Strict):
    id: RuleId
    calls: list[str] = _NOT_EMPTY
    reason: str = _NOT_EMPTY


class PatternModel(_Strict):
    id: RuleId
    pattern: str
    reason: str = _NOT_EMPTY
    ignore_comments: bool = False

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return _regex(value)


class ScarCheckModel(_Strict):
    id: RuleId
    pattern: str
    message: str = _NOT_EMPTY

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return _regex(value)


@functools.cache
def node_builtins() -> frozenset[str]:
    """The node built-in modules' names (data/node_builtins.yaml), without `node:`."""
    text = resources.files("harness.data").joinpath("node_builtins.yaml").read_text()
    return frozenset(yaml.load(text, Loader=_SHIPPED_LOADER)["node_builtins"])


def _js_module(name: str) -> str:
    """A node built-in's name as the policy keeps it: without `node:`."""
    bare = name.removeprefix("node:")
    if bare not in node_builtins():
        raise ValueError(
            f"{name!r} is not a node built-in module (e.g. fs, child_process, assert/strict); "
            "fix the spelling"
        )
    return bare


JsModule = Annotated[str, AfterValidator(_js_module)]


def _go_package(name: str) -> str:
    """A Go import path as the policy keeps it (a standard package, or a module path)."""
    if not re.fullmatch(r"[A-Za-z0-9_.~-]+(?:/[A-Za-z0-9_.~-]+)*", name):
        raise ValueError(f"{name!r} is not a Go import path (e.g. os, runtime/debug)")
    return name


class PolicyFile(_Strict):
    version: Literal[1] = 1
    write_roots: list[str] = _NOT_EMPTY
    protected_paths: list[str] = []
    programs: dict[str, ProgramSyntax] = {}
    forbidden_commands: list[CommandRuleModel] = []
    forbidden_calls: list[CallRuleModel] = []
    forbidden_code_patterns: list[PatternModel] = []
    scar_checks: list[ScarCheckModel] = []
    refused_js_modules: list[JsModule] = []
    allowed_js_modules: dict[str, list[JsModule]] = {}
    refused_go_packages: list[str] = []
    allowed_go_packages: dict[str, list[str]] = {}

    @field_validator("refused_go_packages")
    @classmethod
    def _packages(cls, value: list[str]) -> list[str]:
        return [_go_package(v) for v in value]

    @field_validator("allowed_go_packages")
    @classmethod
    def _allowed_go(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return {task: [_go_package(v) for v in names] for task, names in value.items()}

    @model_validator(mode="after")
    def _allowed_are_refused(self) -> PolicyFile:
        pairs = (
            ("allowed_js_modules", self.allowed_js_modules, "refused_js_modules"),
            ("allowed_go_packages", self.allowed_go_packages, "refused_go_packages"),
        )
        for key, allowed, refused_key in pairs:
            for task, names in allowed.items():
                extra = sorted(set(names) - set(getattr(self, refused_key)))
                if extra:
                    raise ValueError(
                        f"{key}.{task}: {', '.join(extra)} not in {refused_key} "
                        "(a candidate may load it already); remove it"
                    )
        return self

    @field_validator("write_roots")
    @classmethod
    def _folders(cls, value: list[str]) -> list[str]:
        for root in value:
            if "\x00" in root:  # no folder has such a name, and resolving it raises
                raise ValueError(f"{root!r} is not a folder name; write the folder's path")
        return value


def read_policy(path: Path | None) -> tuple[PolicyFile, str, dict[str, int]]:
    """The validated policy at `path` over the shipped default (or the default), its name,
    and the line of each task id `allowed_js_modules` names."""
    # harness/data/policy.yaml; tests keep it identical to the repository's guardrails/policy.yaml
    text = resources.files("harness.data").joinpath("policy.yaml").read_text()
    default = yaml.load(text, Loader=_SHIPPED_LOADER)  # shipped, valid: libyaml when installed
    if path is None:
        return PolicyFile.model_validate(default), "the shipped guardrails policy", {}
    try:
        text = Path(path).read_text()
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text) or {}
    except OSError as exc:
        raise PolicyError(f"cannot read guardrails policy {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path} line {mark.line + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or exc
        raise PolicyError(f"{where}: not valid YAML ({problem}); fix the syntax there") from exc
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: expected a mapping of policy sections at the top level")
    merged = _merged(default, data, path, node)
    try:
        policy = PolicyFile.model_validate(merged)
    except ValidationError as exc:
        problems = [_problem(path, node, err) for err in exc.errors()]
        raise PolicyError("invalid guardrails policy:\n  " + "\n  ".join(problems)) from exc
    _check_unique_ids(policy, path, node)
    lines = {
        task: _line(node, ("allowed_js_modules", task)) or 0 for task in policy.allowed_js_modules
    }
    return policy, str(path), lines


# Sections whose operator entries extend the shipped list, and what names an entry in
# `remove_shipped`: a rule's id, or the entry itself.
EXTENDED = {
    "forbidden_commands": "id",
    "forbidden_calls": "id",
    "forbidden_code_patterns": "id",
    "scar_checks": "id",
    "refused_js_modules": None,
    "refused_go_packages": None,
    "protected_paths": None,
}
REMOVE_KEY = "remove_shipped"


def _merged(default: dict, data: dict, path: Path, node: yaml.Node | None) -> dict:
    """The operator's file over the shipped default: lists extend, `remove_shipped` drops."""
    removed = _removals(data.get(REMOVE_KEY), default, path, node)
    merged = {**default, **{k: v for k, v in data.items() if k != REMOVE_KEY}}
    if isinstance(data.get("programs"), dict):
        merged["programs"] = {**default.get("programs", {}), **data["programs"]}
    for section, key in EXTENDED.items():
        mine = data.get(section, [])
        if not isinstance(mine, list):
            continue  # the schema's error to report, at its line
        kept = [e for e in default.get(section, []) if _name(e, key) not in removed[section]]
        _check_shipped_ids(section, key, mine, kept, path, node)
        merged[section] = mine + [e for e in kept if e not in mine]
    return merged


def _name(entry: Any, key: str | None) -> Any:
    if key is None:
        return entry.removeprefix("node:") if isinstance(entry, str) else entry
    return entry.get(key) if isinstance(entry, dict) else None


def _removals(value: Any, default: dict, path: Path, node: yaml.Node | None) -> dict[str, set[str]]:
    """`remove_shipped`: section -> names, each of them a shipped entry of that section."""
    removed: dict[str, set[str]] = {section: set() for section in EXTENDED}
    if value is None:
        return removed
    where = f"{path} line {_line(node, (REMOVE_KEY,))}"
    if not isinstance(value, dict):
        raise PolicyError(f"{where}: {REMOVE_KEY}: expected section: [names]; fix it")
    for section, names in value.items():
        where = f"{path} line {_line(node, (REMOVE_KEY, section))}"
        if section not in EXTENDED:
            raise PolicyError(
                f"{where}: {REMOVE_KEY}.{section}: not a shipped list; name one of "
                f"{', '.join(EXTENDED)}"
            )
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise PolicyError(f"{where}: {REMOVE_KEY}.{section}: expected a list of names")
        shipped = {_name(e, EXTENDED[section]) for e in default.get(section, [])}
        for name in names:
            if _name(name, None) not in shipped:
                raise PolicyError(
                    f"{where}: {REMOVE_KEY}.{section}: {name!r} is not a shipped entry; fix "
                    f"the spelling or remove it (shipped: {', '.join(sorted(shipped))})"
                )
        removed[section] = {_name(n, None) for n in names}
    return removed


def _check_shipped_ids(
    section: str, key: str | None, mine: list, kept: list, path: Path, node: yaml.Node | None
) -> None:
    """An operator rule that reuses a shipped id must be that rule, or the shipped one removed."""
    if key is None:
        return
    shipped = {e[key]: e for e in kept}
    for i, entry in enumerate(mine):
        name = _name(entry, key)
        if name in shipped and entry != shipped[name]:
            line = _line(node, (section, i, key))
            raise PolicyError(
                f"{path} line {line}: {section}[{i}].{key}: {name!r} is a shipped rule; give "
                f"yours another id, or drop the shipped one with `{REMOVE_KEY}: "
                f"{{{section}: [{name}]}}`"
            )


def _check_unique_ids(policy: PolicyFile, path: Path, node: yaml.Node | None) -> None:
    seen: set[str] = set()
    for section in (
        "forbidden_commands",
        "forbidden_calls",
        "forbidden_code_patterns",
        "scar_checks",
    ):
        for i, rule in enumerate(getattr(policy, section)):
            if rule.id in seen:
                line = _line(node, (section, i, "id"))
                raise PolicyError(
                    f"{path} line {line}: {section}[{i}].id: {rule.id!r} is used twice; "
                    "give each rule its own id"
                )
            seen.add(rule.id)


def _problem(path: Path, node: yaml.Node | None, err: Any) -> str:
    loc = tuple(err["loc"])
    line = _line(node, loc)
    where = f"{path} line {line}" if line else str(path)
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    message = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(_fields(loc[:-1]))
        message = f"unknown key; fix the spelling or remove it (allowed here: {allowed})"
    elif err["type"] == "missing":
        message = "missing; add it"
    elif err["type"] == "too_short":
        message = "empty; give at least one entry"
    return f"{where}: {field or 'policy'}: {message}"


def _line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the YAML node at `loc` (or its nearest existing parent)."""
    line = None if node is None else node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next((kv for kv in node.value if kv[0].value == str(part)), None)
            if pair is None:
                return line
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _fields(loc: tuple[Any, ...]) -> list[str]:
    """Field names allowed at `loc`, walking the schema through lists and dicts."""
    model: Any = PolicyFile
    for part in loc:
        if isinstance(model, type) and issubclass(model, BaseModel):
            model = (
                model.model_fields[str(part)].annotation
                if str(part) in model.model_fields
                else None
            )
        else:
            args = typing.get_args(model)
            model = args[-1] if args else None
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(model.model_fields)
    return []
