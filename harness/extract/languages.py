"""The language registry: harness/data/languages.yaml read once into frozen Language values."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePath
from types import MappingProxyType
from typing import Any

import yaml

__all__ = ["LANGUAGES", "RESULT_FORMATS", "Language", "language_named", "language_of_path"]

RESULT_FORMATS = ("pytest", "junit", "go-json")


@dataclass(frozen=True)
class Language:
    """One output language: how replies fence it, its file suffixes, its parser, its tests."""

    name: str
    title: str
    fences: tuple[str, ...]
    suffixes: tuple[str, ...]
    grammar: str | None  # tree-sitter grammar; None: Python's own ast
    test_command: tuple[str, ...] | None  # the default when a task gives none
    results: str
    idioms: str = ""

    @property
    def fence(self) -> str:
        """The fence info string prompts ask for."""
        return self.fences[0]

    @property
    def suffix(self) -> str:
        """The usual output suffix (attempt files in the run directory use it)."""
        return self.suffixes[0]

    @property
    def is_python(self) -> bool:
        return self.grammar is None


def _language(name: str, row: Mapping[str, Any]) -> Language:
    command = row.get("test_command")
    language = Language(
        name=name,
        title=str(row["title"]),
        fences=tuple(str(f).lower() for f in row["fences"]),
        suffixes=tuple(str(s) for s in row["suffixes"]),
        grammar=row.get("grammar"),
        test_command=tuple(str(w) for w in command) if command is not None else None,
        results=str(row["results"]),
        idioms=" ".join(str(row.get("idioms", "")).split()),
    )
    if language.results not in RESULT_FORMATS or not language.fences or not language.suffixes:
        raise ValueError(f"harness/data/languages.yaml: language {name!r} is malformed")
    return language


@functools.cache
def _registry() -> Mapping[str, Language]:
    text = resources.files("harness.data").joinpath("languages.yaml").read_text()
    rows = yaml.safe_load(text)["languages"]
    return MappingProxyType({name: _language(name, row) for name, row in rows.items()})


LANGUAGES: Mapping[str, Language] = _registry()


def language_named(name: str) -> Language:
    """The language called `name`; LookupError naming the known ones otherwise."""
    try:
        return LANGUAGES[name]
    except KeyError:
        known = ", ".join(sorted(LANGUAGES))
        raise LookupError(f"unknown language {name!r}; known languages: {known}") from None


def language_of_path(path: PurePath | str) -> Language | None:
    """The language a file's suffix says it is in (a `_test.go` file is Go), or None."""
    suffix = PurePath(path).suffix.lower()
    return next((lang for lang in LANGUAGES.values() if suffix in lang.suffixes), None)
