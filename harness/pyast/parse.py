"""Thread-safe parsing of model code, and the dotted text of a name."""

from __future__ import annotations

import ast
import threading
import warnings

__all__ = ["dotted", "parse_module"]

# CPython 3.11 keeps the AST constructor's recursion counter in interpreter-wide state, so
# parses on several threads can fail with a spurious SystemError "AST constructor recursion
# depth mismatch" (python/cpython#106905). Every parse in the harness goes through here:
# serialised, and retried in case code outside the harness parses at the same moment.
_LOCK = threading.Lock()
_TRIES = 3


def parse_module(code: str) -> ast.Module:
    """`ast.parse(code)`, serialised across threads; raises what ast.parse raises.

    The code is the model's: its invalid escape sequences and the like are its problem, so
    the compiler's warnings about it are not let out into the harness's output.
    """
    for _ in range(_TRIES - 1):
        try:
            return _parse(code)
        except SystemError:
            continue  # the spurious one; a real error repeats on the last try
    return _parse(code)


def _parse(code: str) -> ast.Module:
    with _LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)


def dotted(node: ast.AST) -> str | None:
    """The dotted text of a Name/Attribute chain, else None (a loop: chains can be long)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])
