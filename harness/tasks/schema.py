"""The task fields: their types and limits, how defaults merge, and errors in words a user fixes."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

from harness.tasks.spec import ISOLATION_DEFAULT
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = [
    "MERGED_FIELDS",
    "NOT_DEFAULTABLE",
    "PLACEHOLDER",
    "RETIRED",
    "TASK_FIELDS",
    "TaskModel",
    "explain",
    "merge_defaults",
    "suggest",
]

_NAME = r"^[A-Za-z0-9_-]+$"
Name = Annotated[str, Field(pattern=_NAME, min_length=1, max_length=64)]
RelPath = Annotated[str, Field(min_length=1, max_length=4096)]


MAX_ATTEMPTS = 50


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class DifferentialOverride(BaseModel):
    """A task's `differential:` keys: each replaces the config's (docs/differential.md)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool | None = None
    examples: int | None = Field(default=None, ge=1, le=100_000)
    seconds: float | None = Field(default=None, gt=0, le=86_400, allow_inf_nan=False)
    required: bool | None = None
    ignore: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = None
    messages: bool | None = None


class TaskModel(BaseModel):
    """One task entry after `defaults:` were merged in; strict: `true` is not 1, 5.0 not 5."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: Name
    reference: list[RelPath] = Field(min_length=1)
    tests: list[RelPath] = Field(min_length=1)
    output: RelPath
    type: Name = "service_port"
    examples: list[RelPath] = []
    capabilities: RelPath | None = None
    support: list[RelPath] = []
    hidden_tests: list[RelPath] = []  # run and scored, never shown to a model
    instructions: Annotated[str, Field(max_length=100_000)] = ""
    max_attempts: int = Field(default=5, ge=1, le=MAX_ATTEMPTS)
    solution: RelPath | None = None
    language: Name = "python"  # checked against the registry by _language
    test_command: Any = None  # an argv list or a string: checked by _language, with the fix
    results: Annotated[str, Field(max_length=64)] | None = None
    isolation: Literal["boundary", "in_process"] | None = None  # None: spec.ISOLATION_DEFAULT
    differential: DifferentialOverride | None = None  # None: the config's

    _lists = field_validator(
        "reference", "tests", "examples", "support", "hidden_tests", mode="before"
    )(_as_list)


TASK_FIELDS = tuple(TaskModel.model_fields)
# Shared context a task adds to rather than replaces: defaults' entries first, then the task's.
MERGED_FIELDS = ("support", "examples")
# What only one task can have: defaulting it would give every task the same one.
NOT_DEFAULTABLE = ("id", "output")
# Fields a task list may still carry from older designs: why each is gone, and what to write.
RETIRED = {
    "results_path": (
        "is not used: the harness hands the test command a private pipe as {results}, which "
        "only the harness reads (so candidate code cannot rewrite the report); remove "
        "results_path: and put {results} where the command names its report file, e.g. "
        "--junitxml={results} or --test-reporter-destination={results}"
    ),
}
# Stands in for a task's own fields while `defaults:` alone is validated.
PLACEHOLDER = {"id": "x", "reference": ["x"], "tests": ["x"], "output": "x.py"}


def merge_defaults(defaults: Mapping[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
    """The task's fields over the defaults; MERGED_FIELDS are the union, defaults first."""
    merged = {**defaults, **task}
    for field in MERGED_FIELDS:
        shared, own = _as_list(defaults.get(field)), _as_list(task.get(field))
        if isinstance(shared, list) and isinstance(own, list):
            merged[field] = list(dict.fromkeys([*shared, *own]))
    return merged


def suggest(key: Any, valid: tuple[str, ...] = TASK_FIELDS, what: str = "key") -> str:
    """'unknown key; did you mean ...?' for a misspelt key."""
    close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(valid)}"
    return f"unknown {what}; {hint}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_FIXES = {
    "string_type": "expected text; put it in quotes",
    "int_type": "expected a whole number, e.g. 5",
    "list_type": "expected a path or a list of paths",
    "too_short": "give at least one",
    "string_too_short": "is empty; give a value",
    "missing": "required field is missing; add it",
}


def explain(exc: ValidationError) -> Iterator[tuple[str, str]]:
    """(field, message saying what to change) for each error pydantic found."""
    for err in exc.errors():
        field = str(err["loc"][0]) if err["loc"] else ""
        kind, got = err["type"], err.get("input")
        if kind == "extra_forbidden":
            yield field, RETIRED.get(field) or suggest(field)
        elif kind == "missing":
            yield field, _FIXES[kind]
        elif kind == "string_pattern_mismatch":
            yield field, f"use only letters, digits, - and _ (got {_shown(got)})"
        elif kind == "string_too_long":
            limit = err.get("ctx", {}).get("max_length")
            yield field, f"is longer than {limit} characters; shorten it"
        elif kind in ("greater_than_equal", "less_than_equal"):
            yield field, f"must be between 1 and {MAX_ATTEMPTS} (got {_shown(got)})"
        elif kind in _FIXES:
            index = err["loc"][1] if len(err["loc"]) > 1 else None
            item = f"item {index + 1}: " if isinstance(index, int) else ""
            yield field, f"{item}{_FIXES[kind]} (got {_shown(got)})"
        else:
            yield field, f"{err['msg']} (got {_shown(got)})"
