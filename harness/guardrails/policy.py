"""The policy file's schema, read with line numbers and merged over the shipped default."""

from __future__ import annotations

import re
import typing
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
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


def _js_module(name: str) -> str:
    """A node built-in's name as the policy keeps it: without `node:`."""
    bare = name.removeprefix("node:")
    if not re.fullmatch(r"[a-z0-9_]+(?:/[a-z0-9_]+)*", bare):
        raise ValueError(f"{name!r} is not a node built-in module's name (e.g. fs, assert/strict)")
    return bare


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
    refused_js_modules: list[str] = []
    allowed_js_modules: dict[str, list[str]] = {}
    refused_go_packages: list[str] = []
    allowed_go_packages: dict[str, list[str]] = {}

    @field_validator("refused_js_modules")
    @classmethod
    def _modules(cls, value: list[str]) -> list[str]:
        return [_js_module(v) for v in value]

    @field_validator("allowed_js_modules")
    @classmethod
    def _allowed(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return {task: [_js_module(v) for v in names] for task, names in value.items()}

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


def read_policy(path: Path | None) -> tuple[PolicyFile, str]:
    """The validated policy at `path` over the shipped default (or the default), and its name."""
    # harness/data/policy.yaml; tests keep it identical to the repository's guardrails/policy.yaml
    text = resources.files("harness.data").joinpath("policy.yaml").read_text()
    default = yaml.load(text, Loader=_SHIPPED_LOADER)  # shipped, valid: libyaml when installed
    if path is None:
        return PolicyFile.model_validate(default), "the shipped guardrails policy"
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
    try:
        policy = PolicyFile.model_validate({**default, **data})
    except ValidationError as exc:
        problems = [_problem(path, node, err) for err in exc.errors()]
        raise PolicyError("invalid guardrails policy:\n  " + "\n  ".join(problems)) from exc
    _check_unique_ids(policy, path, node)
    return policy, str(path)


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
