"""Literals in Python source: the telling constants a module holds or compares with (a free
hint of special-cased test inputs for the principle judge's gate; never a verdict)."""

from __future__ import annotations

import ast

from harness.pyast.parse import parse_module

__all__ = ["compared_literals", "literals"]


def literals(source: str) -> set[object]:
    """Every telling constant in `source` (strings of 3+ characters, numbers of magnitude
    10+); empty when it does not parse."""
    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and _telling(n.value)}


def compared_literals(source: str) -> dict[object, int]:
    """Each telling constant `source` compares something with (`==`, `in`, ...) → the first
    line it does so on; empty when it does not parse."""
    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    found: dict[object, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            if isinstance(side, ast.Constant) and _telling(side.value):
                line = found.get(side.value, node.lineno)
                found[side.value] = min(line, node.lineno)
    return found


def _telling(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return len(value) >= 3
    return isinstance(value, int | float) and abs(value) >= 10
