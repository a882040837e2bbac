"""The modules a task's tests and support files import by absolute name. The sandbox imports
the library ones before any candidate code exists, so that what they compile from strings as
they load (dataclass methods, hypothesis strategies) is known to be library code."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from harness.pyast import parse_module

__all__ = ["imported_modules"]


def imported_modules(files: Iterable[tuple[str, bytes]]) -> list[str]:
    """Every module named by an absolute import in the .py files, in first-seen order; a
    file that does not parse names none (its collection will say why)."""
    names: dict[str, None] = {}
    for rel, data in files:
        if rel.endswith(".py"):
            names.update(dict.fromkeys(_names_in(data)))
    return list(names)


@functools.lru_cache(maxsize=256)
def _names_in(source: bytes) -> tuple[str, ...]:
    try:
        tree = parse_module(source.decode("utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return ()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
    return tuple(n for n in dict.fromkeys(found) if n.partition(".")[0] != "__future__")
