"""Constant folding for model code: the strings and argv lists an expression may evaluate to."""

from __future__ import annotations

import ast
import itertools
import posixpath
from dataclasses import dataclass, field

from harness.pyast.bindings import binding_events, import_aliases, key_of
from harness.pyast.calls import fold_call
from harness.pyast.values import DYN, MAX_ALTERNATIVES, Value, concat, only_str, product

__all__ = ["Folder"]

_MAX_DEPTH = 12


@dataclass
class Folder:
    """Folds expressions to the strings they can evaluate to; unknown parts become DYN.

    Flow-insensitive on purpose: every assignment to a name is an alternative, and
    `+=`, `.append`, `.extend` and `.insert` add to the latest one, so
    `cmd = ["git", "push"]; cmd.append("-f")` folds to `("git", "push", "-f")`. Import
    aliases (and `run = subprocess.run`) resolve through `qualname`.
    """

    tree: ast.AST
    names: dict[str, str] = field(default_factory=dict)
    _events: dict[str, list[tuple[str, ast.expr]]] = field(default_factory=dict)
    _active: set[str] = field(default_factory=set)  # names being folded: `x = x + "a"`
    _known: dict[tuple[str, int], list[Value]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.names = self.names or import_aliases(self.tree)
        found: list[tuple[int, int, str, str, ast.expr]] = []
        for node in ast.walk(self.tree):
            for name, kind, value in binding_events(node):
                found.append((node.lineno, node.col_offset, name, kind, value))  # type: ignore[attr-defined]
        for _, _, name, kind, value in sorted(found, key=lambda f: (f[0], f[1])):
            self._events.setdefault(name, []).append((kind, value))
        for name, events in self._events.items():
            target = self.qualname(events[0][1]) if len(events) == 1 else None
            if events[0][0] == "set" and target is not None:
                self.names.setdefault(name, target)  # `run = subprocess.run`

    def qualname(self, node: ast.expr) -> str | None:
        """`sp.run` → `subprocess.run`; also `getattr(os, "system")`, `__import__("os")`."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Call) and node.args:
            func = self.qualname(node.func)
            if func in ("__import__", "importlib.import_module"):
                return only_str(self.fold(node.args[0]))
            if func == "getattr" and len(node.args) >= 2:
                base, attr = self.qualname(node.args[0]), only_str(self.fold(node.args[1]))
                return None if base is None or attr is None else f"{base}.{attr}"
        return None

    def fold(self, node: ast.expr | None, depth: int = 0) -> list[Value]:
        """Every value `node` may have (at most a few); [DYN] when nothing is known."""
        if node is None or depth > _MAX_DEPTH:
            return [DYN]
        values = _dispatch(self, node, depth + 1)
        return values[:MAX_ALTERNATIVES] or [DYN]

    @property
    def bound(self) -> set[str]:
        """Every name (and `self.` attribute) the code assigns."""
        return set(self._events)

    def strings(self, node: ast.expr, depth: int = 0) -> list[str]:
        """`fold`, as strings: an argv alternative becomes DYN."""
        return [v if isinstance(v, str) else DYN for v in self.fold(node, depth)]

    def sequences(self, node: ast.expr, depth: int = 0) -> list[tuple[str, ...]]:
        """`fold`, as argv lists: a string alternative becomes `(DYN,)`."""
        return [v if isinstance(v, tuple) else (DYN,) for v in self.fold(node, depth)]

    def name(self, name: str, depth: int) -> list[Value]:
        """Every value the code binds `name` (or `self.name`) to."""
        if name in self._active:
            return [DYN]
        # Folded with no other name in progress, the answer depends on (name, depth) alone,
        # so it is kept: code that reads a much-assigned name many times folds in linear time.
        keep = not self._active
        if keep and (name, depth) in self._known:
            return self._known[(name, depth)]
        self._active.add(name)
        try:
            alternatives: list[Value] = []
            for kind, value in self._events.get(name, []):
                if kind == "set":
                    alternatives.extend(self.fold(value, depth))
                elif alternatives:
                    alternatives = _add(alternatives, kind, self, value, depth)
        finally:
            self._active.discard(name)
        values = alternatives[:MAX_ALTERNATIVES] or [DYN]
        if keep:
            self._known[(name, depth)] = values
        return values


def _add(
    alternatives: list[Value], kind: str, folder: Folder, node: ast.expr, depth: int
) -> list[Value]:
    out: list[Value] = []
    for base, extra in itertools.product(alternatives, folder.fold(node, depth)):
        if kind in ("append", "insert") and isinstance(base, tuple):
            out.append((*base, extra if isinstance(extra, str) else DYN))
        else:
            out.append(concat(base, extra))
    return out[:MAX_ALTERNATIVES]


def _dispatch(folder: Folder, node: ast.expr, depth: int) -> list[Value]:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bytes):
            return [node.value.decode("latin-1")]
        return [node.value if isinstance(node.value, str) else str(node.value)]
    if isinstance(node, ast.Name):
        return folder.name(node.id, depth)
    if (key := key_of(node)) is not None and key.startswith("self."):
        return folder.name(key if key in folder.bound else key[5:], depth)  # or a class constant
    if isinstance(node, ast.JoinedStr):
        parts = [
            folder.strings(v.value if isinstance(v, ast.FormattedValue) else v, depth)
            for v in node.values
        ]
        return ["".join(p) for p in product(parts)]  # type: ignore[arg-type]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return _sequence(folder, node.elts, depth)
    if isinstance(node, ast.IfExp):
        return folder.fold(node.body, depth) + folder.fold(node.orelse, depth)
    if isinstance(node, ast.BinOp):
        return _binary(folder, node, depth)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):  # `[::-1]`
        value = node.operand.value if isinstance(node.operand, ast.Constant) else None
        return [str(-value)] if isinstance(value, int | float) else [DYN]
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _slice(folder, node.value, node.slice, depth)
    if isinstance(node, ast.Call):
        return fold_call(folder, node, depth)
    return [DYN]


def _sequence(folder: Folder, elements: list[ast.expr], depth: int) -> list[Value]:
    parts: list[list[tuple[str, ...]]] = []
    for element in elements:
        if isinstance(element, ast.Starred):
            parts.append(folder.sequences(element.value, depth))
        else:
            parts.append([(s,) for s in folder.strings(element, depth)])
    return [tuple(itertools.chain.from_iterable(p)) for p in product(parts)]  # type: ignore[arg-type]


def _binary(folder: Folder, node: ast.BinOp, depth: int) -> list[Value]:
    if isinstance(node.op, ast.Add):
        return _sum(folder, _addends(node), depth)
    if isinstance(node.op, ast.Div):  # `Path("/") / "proc"`
        pairs = product([folder.strings(node.left, depth), folder.strings(node.right, depth)])
        return [posixpath.join(*pair) for pair in pairs]  # type: ignore[arg-type]
    if isinstance(node.op, ast.Mod):
        return _percent(folder, node, depth)
    return [DYN]


def _addends(node: ast.expr) -> list[ast.expr]:
    """`a + b + c` → [a, b, c], without recursion: a chain of `+` may be long, on purpose."""
    addends: list[ast.expr] = []
    pending = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Add):
            pending.extend((item.right, item.left))
        else:
            addends.append(item)
    return addends


def _sum(folder: Folder, addends: list[ast.expr], depth: int) -> list[Value]:
    totals = folder.fold(addends[0], depth)
    for addend in addends[1:]:
        pairs = itertools.product(totals, folder.fold(addend, depth))
        totals = [concat(a, b) for a, b in itertools.islice(pairs, MAX_ALTERNATIVES)]
    return totals


def _percent(folder: Folder, node: ast.BinOp, depth: int) -> list[Value]:
    right = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
    args = product([folder.strings(r, depth) for r in right])
    out: list[Value] = []
    for fmt, values in itertools.product(folder.strings(node.left, depth), args):
        try:
            out.append(fmt % values)
        except (TypeError, ValueError):
            out.append(DYN)
    return out


def _slice(folder: Folder, owner: ast.expr, window: ast.Slice, depth: int) -> list[Value]:
    """`"tixe_"[::-1]`: constant bounds on a known string or argv list."""
    try:
        bounds = slice(
            *(_bound(folder, p, depth) for p in (window.lower, window.upper, window.step))
        )
        return [DYN if DYN in v else v[bounds] for v in folder.fold(owner, depth)]
    except ValueError:  # a bound that is not a known integer, or a step of 0
        return [DYN]


def _bound(folder: Folder, node: ast.expr | None, depth: int) -> int | None:
    return None if node is None else int(only_str(folder.fold(node, depth)) or DYN)
