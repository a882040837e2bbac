"""What names mean in generated code: imports and aliases, and every binding of a name."""

from __future__ import annotations

import ast
from collections.abc import Iterable

__all__ = ["binding_events", "import_aliases", "key_of"]


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name → what it refers to: `import subprocess as sp` makes sp → subprocess."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def key_of(target: ast.expr) -> str | None:
    """The name a binding is tracked under: `cmd`, or `self.cmd` for instance attributes."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return f"self.{target.attr}" if target.value.id in ("self", "cls") else None
    return None


def binding_events(node: ast.AST) -> Iterable[tuple[str, str, ast.expr]]:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if (key := key_of(target)) is not None:
                yield key, "set", node.value
    elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
        if (key := key_of(node.target)) is not None:
            yield key, "set", node.value
    elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        if (key := key_of(node.target)) is not None:
            yield key, "add", node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        method = node.func.attr
        if method in ("append", "extend", "insert") and (key := key_of(node.func.value)):
            yield key, method, node.args[-1]
