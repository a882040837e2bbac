"""ast.parse that is safe to call from many threads at once."""

from __future__ import annotations

import ast
import threading

__all__ = ["parse_module"]

# CPython 3.11 keeps the AST constructor's recursion counter in interpreter-wide state, so
# parses on several threads can fail with a spurious SystemError "AST constructor recursion
# depth mismatch" (python/cpython#106905). Every parse in the harness goes through here:
# serialised, and retried in case code outside the harness parses at the same moment.
_LOCK = threading.Lock()
_TRIES = 3


def parse_module(code: str) -> ast.Module:
    """`ast.parse(code)`, serialised across threads; raises what ast.parse raises."""
    for _ in range(_TRIES - 1):
        try:
            with _LOCK:
                return ast.parse(code)
        except SystemError:
            continue  # the spurious one; a real error repeats on the last try
    with _LOCK:
        return ast.parse(code)
