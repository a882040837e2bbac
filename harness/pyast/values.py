"""The folder's values and the small helpers its parts share."""

from __future__ import annotations

import ast
import binascii
import itertools
from collections.abc import Callable
from typing import Protocol

__all__ = ["DYN", "MAX_ALTERNATIVES", "Folds", "Value", "concat", "only_str", "product", "safe"]

DYN = "\x00"  # text only known at run time: $VAR, $(...), a value Python cannot fold
Value = str | tuple[str, ...]  # a string, or a list of strings (argv)
MAX_ALTERNATIVES = 16


class Folds(Protocol):
    """What the call folding needs of the Folder (kept apart so neither imports the other)."""

    def qualname(self, node: ast.expr) -> str | None: ...
    def fold(self, node: ast.expr | None, depth: int = 0) -> list[Value]: ...
    def strings(self, node: ast.expr, depth: int = 0) -> list[str]: ...
    def sequences(self, node: ast.expr, depth: int = 0) -> list[tuple[str, ...]]: ...


def only_str(values: list[Value]) -> str | None:
    """The one string `values` holds, or None when there are several or it is an argv."""
    return values[0] if len(values) == 1 and isinstance(values[0], str) else None


def concat(left: Value, right: Value) -> Value:
    """`left + right` for two strings or two argv lists; DYN for a mix."""
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, tuple) and isinstance(right, tuple):
        return left + right
    return DYN


def product(parts: list[list[str]] | list[list[Value]]) -> list[tuple[Value, ...]]:
    """One pick from each part's alternatives, for the first few combinations."""
    return list(itertools.islice(itertools.product(*parts), MAX_ALTERNATIVES))


def safe(make: Callable[[], Value]) -> Value:
    """`make()`, or DYN when the folded values make it fail (as they would at run time)."""
    try:
        return make()
    except (ValueError, TypeError, IndexError, KeyError, binascii.Error, UnicodeError):
        return DYN
