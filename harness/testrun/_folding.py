"""Constant folding for the pre-check: the string an expression always evaluates to.

Enough to see through the usual obfuscation of a forbidden name ("_" + "exit",
"".join([...]), f-strings of constants, chr(), [::-1], Path("/") / "proc"); anything that
depends on a runtime value folds to None.
"""

from __future__ import annotations

import ast
import posixpath

__all__ = ["fold", "fold_int"]


def fold(node: ast.AST) -> str | None:
    """The constant string an expression always evaluates to, when it is that simple."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        value = node.value
        return value.decode(errors="replace") if isinstance(value, bytes) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Div):
        left, right = fold(node.left), fold(node.right)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.op, ast.Add) else posixpath.join(left, right)
    if isinstance(node, ast.JoinedStr):
        parts = [fold(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        base, step = fold(node.value), node.slice.step
        if base is not None and isinstance(step, ast.UnaryOp) and fold_int(step) == -1:
            return base[::-1]
    if isinstance(node, ast.Call):
        return _fold_call(node)
    return None


def fold_int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = fold_int(node.operand)
        return None if inner is None else -inner
    return None


def _fold_call(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id == "chr" and len(node.args) == 1:
        code = fold_int(node.args[0])
        return chr(code) if code is not None and 0 <= code < 0x110000 else None
    if isinstance(func, ast.Attribute) and func.attr == "join" and len(node.args) == 1:
        sep, items = fold(func.value), node.args[0]
        if sep is not None and isinstance(items, ast.List | ast.Tuple):
            parts = [fold(e) for e in items.elts]
            return None if None in parts else sep.join(parts)  # type: ignore[arg-type]
    if isinstance(func, ast.Attribute) and func.attr == "decode" and not node.args:
        return fold(func.value)
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    parts = [fold(a) for a in node.args]
    if node.args and None not in parts and name in ("join", "Path", "PurePath", "PosixPath"):
        return posixpath.join(*parts)  # type: ignore[arg-type]
    return None
