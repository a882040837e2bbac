"""Which names in model code are bound only by importing, with scopes resolved as Python does.

A parameter, a loop variable or a local named like a module (`node`, `json`) is not that
module: only a name whose every binding, in the scope it resolves to, is an import (or an
alias of one: `TC = unittest.TestCase`, `m = __import__("x")`) is certainly a module or
something it exports. What is not certain is left alone, never refused.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["Scopes"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_IMPORT = "import"  # a binding by an import statement
_MAX_DEPTH = 8


@dataclass
class _Scope:
    node: ast.AST
    parent: _Scope | None
    # name → each binding: _IMPORT, the assigned expression (`x = <expr>`), or None (any
    # other binding: a parameter, a loop target, a def, a tuple target, `except ... as`).
    bindings: dict[str, list[ast.expr | str | None]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    def bind(self, name: str, how: ast.expr | str | None) -> None:
        self.bindings.setdefault(name, []).append(how)


class Scopes:
    """Every scope of a module and what binds each name in it."""

    def __init__(self, tree: ast.Module) -> None:
        self.module = _Scope(tree, None)
        self._scope_of: dict[int, _Scope] = {}
        self._collect(tree.body, self.module)

    def imported(self, name: ast.Name) -> bool:
        """Whether `name`, where it is read, certainly means an imported module or object."""
        scope = self._scope_of.get(id(name))
        return scope is not None and self._imported(scope, name.id, 0)

    def _imported(self, scope: _Scope, name: str, depth: int) -> bool:
        home = self._home(scope, name)
        if home is None or depth > _MAX_DEPTH:
            return False
        ways = home.bindings[name]
        return all(w == _IMPORT or self._aliases_import(home, w, depth) for w in ways)

    def _aliases_import(self, scope: _Scope, value: ast.expr | str | None, depth: int) -> bool:
        if not isinstance(value, ast.expr):
            return False
        if isinstance(value, ast.Call):  # __import__("x"), importlib.import_module("x")
            func = value.func
            named = isinstance(func, ast.Name) and func.id == "__import__"
            via = isinstance(func, ast.Attribute) and func.attr == "import_module"
            return named or (via and self._aliases_import(scope, func.value, depth))
        while isinstance(value, ast.Attribute):
            value = value.value
        return isinstance(value, ast.Name) and self._imported(scope, value.id, depth + 1)

    def _home(self, scope: _Scope, name: str) -> _Scope | None:
        """The scope whose binding of `name` a read in `scope` sees (LEGB; classes skipped)."""
        if name in scope.declared_global:
            return self.module if name in self.module.bindings else None
        if name in scope.bindings and name not in scope.declared_nonlocal:
            return scope
        outer = scope.parent
        while outer is not None and outer is not self.module:
            if not isinstance(outer.node, ast.ClassDef) and name in outer.bindings:
                return outer
            outer = outer.parent
        return self.module if name in self.module.bindings else None

    def _collect(self, nodes: list[ast.AST] | list[ast.stmt], scope: _Scope) -> None:
        for node in nodes:
            self._visit(node, scope)

    def _visit(self, node: ast.AST, scope: _Scope) -> None:
        self._scope_of[id(node)] = scope
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._definition(node, scope)
        elif isinstance(node, ast.Lambda):
            self._collect([*node.args.defaults, *filter(None, node.args.kw_defaults)], scope)
            self._function_body(node, [node.body], scope)
        elif isinstance(node, _COMPREHENSIONS):
            self._comprehension(node, scope)
        elif _single_name_assign(node):
            scope.bind(node.targets[0].id, node.value)  # type: ignore[attr-defined]
            self._scope_of[id(node.targets[0])] = scope  # type: ignore[attr-defined]
            self._visit(node.value, scope)  # type: ignore[attr-defined]
        else:
            self._binding(node, scope)
            self._collect(list(ast.iter_child_nodes(node)), scope)

    def _binding(self, node: ast.AST, scope: _Scope) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                is_module = isinstance(node, ast.Import) and alias.asname is None
                scope.bind(
                    alias.name.split(".")[0] if is_module else alias.asname or alias.name, _IMPORT
                )
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            scope.bind(node.id, None)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            scope.bind(node.name, None)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            scope.bind(node.rest, None)
        elif isinstance(node, ast.Global):
            scope.declared_global.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.declared_nonlocal.update(node.names)

    def _definition(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, scope: _Scope
    ) -> None:
        scope.bind(node.name, None)
        self._collect(node.decorator_list, scope)
        if isinstance(node, ast.ClassDef):
            self._collect([*node.bases, *node.keywords], scope)
            inner = _Scope(node, scope)
            self._collect(node.body, inner)
            return
        args = node.args
        self._collect([*args.defaults, *filter(None, args.kw_defaults)], scope)
        annotations = [a.annotation for a in _parameters(args) if a.annotation]
        self._collect([*annotations, *([node.returns] if node.returns else [])], scope)
        self._function_body(node, node.body, scope)

    def _function_body(self, node: ast.AST, body: list[ast.AST], scope: _Scope) -> None:
        inner = _Scope(node, scope)
        for parameter in _parameters(node.args):  # type: ignore[attr-defined]
            inner.bind(parameter.arg, None)
        self._collect(body, inner)

    def _comprehension(self, node: ast.AST, scope: _Scope) -> None:
        """A comprehension's targets are its own; a walrus in it binds in `scope`."""
        inner = _Scope(node, scope)
        for sub in ast.walk(node):
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                scope.bind(sub.target.id, None)
        for generator in node.generators:  # type: ignore[attr-defined]
            self._scope_of[id(generator)] = inner
            for name in ast.walk(generator.target):
                if isinstance(name, ast.Name):
                    inner.bind(name.id, None)
            self._collect([generator.iter, *generator.ifs], inner)
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]  # type: ignore[attr-defined]
        self._collect(parts, inner)


def _single_name_assign(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    )


def _parameters(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]
