"""What every task list under some folders keeps from a model: its hidden tests, its
solutions and the list itself. Context tools read under folders that may hold more than one
task list; each list's hidden inputs stay hidden from the night of any other."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from harness.tasks.load import MAX_TASK_LIST_BYTES
from harness.tasks.yamlfile import YamlError, read_yaml

__all__ = ["withheld_by_lists"]

_KEPT = ("hidden_tests", "solution")  # the fields whose files no model may read
_SKIPPED_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox"}
_MAX_FILES = 100_000  # entries looked at per root: a read root is a source tree, not a disk


def withheld_by_lists(roots: Iterable[Path]) -> list[Path]:
    """Every task list under `roots` (a YAML file with a `tasks:` list) and, resolved, the
    `hidden_tests` and `solution` its tasks and defaults name."""
    found: list[Path] = []
    for listing in dict.fromkeys(_yaml_files(roots)):
        try:
            data = read_yaml(listing, what="task list", max_bytes=MAX_TASK_LIST_BYTES).data
        except (YamlError, OSError, ValueError):
            continue  # not readable as YAML: no task list, and nothing it names
        if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
            continue
        found.append(listing)
        entries = [data.get("defaults"), *data["tasks"]]
        found += [listing.parent / rel for e in entries for rel in _named(e)]
    return [p.resolve() for p in found]


def _named(entry: Any) -> Iterator[str]:
    if not isinstance(entry, dict):
        return
    for key in _KEPT:
        value = entry.get(key)
        for rel in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            if isinstance(rel, str) and rel and "\x00" not in rel:
                yield rel


def _yaml_files(roots: Iterable[Path]) -> Iterator[Path]:
    for root in roots:
        seen = 0
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
            seen += len(files) + len(dirs)
            if seen > _MAX_FILES:
                break
            for name in sorted(files):
                if name.endswith((".yaml", ".yml")):
                    yield Path(folder, name)
