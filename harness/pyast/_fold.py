"""Constant folding for generated code: what strings and argv lists a call may really get."""

from __future__ import annotations

import ast
import base64
import binascii
import itertools
import shlex
from dataclasses import dataclass, field

from harness.pyast._bindings import binding_events, dotted_names, key_of

__all__ = ["DYN", "Folder", "Value"]

DYN = "\x00"  # text only known at run time: $VAR, $(...), a value Python cannot fold
Value = str | tuple[str, ...]  # a string, or a list of strings (argv)
_MAX_ALTERNATIVES = 16
_MAX_DEPTH = 12


@dataclass
class Folder:
    """Folds expressions to the strings they can evaluate to; unknown parts become DYN.

    Flow-insensitive on purpose: every assignment to a name is an alternative, and
    `+=`, `.append`, `.extend` and `.insert` add to the latest one, so
    `cmd = ["git", "push"]; cmd.append("-f")` folds to `("git", "push", "-f")`.
    """

    tree: ast.AST
    names: dict[str, str] = field(default_factory=dict)
    _events: dict[str, list[tuple[str, ast.expr]]] = field(default_factory=dict)
    _active: set[str] = field(default_factory=set)  # names being folded: `x = x + "a"`

    def __post_init__(self) -> None:
        self.names = self.names or dotted_names(self.tree)
        found: list[tuple[int, int, str, str, ast.expr]] = []
        for node in ast.walk(self.tree):
            for name, kind, value in binding_events(node):
                found.append((node.lineno, node.col_offset, name, kind, value))  # type: ignore[attr-defined]
        for _, _, name, kind, value in sorted(found, key=lambda f: (f[0], f[1])):
            self._events.setdefault(name, []).append((kind, value))
        for name, events in self._events.items():
            target = self.dotted(events[0][1]) if len(events) == 1 else None
            if events[0][0] == "set" and target is not None:
                self.names.setdefault(name, target)  # `run = subprocess.run`

    def dotted(self, node: ast.expr) -> str | None:
        """`sp.run` → `subprocess.run`; also `getattr(os, "system")`, `__import__("os")`."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Call) and node.args:
            func = self.dotted(node.func)
            if func in ("__import__", "importlib.import_module"):
                return _only_str(self.fold(node.args[0]))
            if func == "getattr" and len(node.args) >= 2:
                base, attr = self.dotted(node.args[0]), _only_str(self.fold(node.args[1]))
                return None if base is None or attr is None else f"{base}.{attr}"
        return None

    def fold(self, node: ast.expr | None, depth: int = 0) -> list[Value]:
        """Every value `node` may have (at most a few); [DYN] when nothing is known."""
        if node is None or depth > _MAX_DEPTH:
            return [DYN]
        values = _dispatch(self, node, depth + 1)
        return values[:_MAX_ALTERNATIVES] or [DYN]

    @property
    def bound(self) -> set[str]:
        """Every name (and `self.` attribute) the code assigns."""
        return set(self._events)

    def strings(self, node: ast.expr, depth: int) -> list[str]:
        return [v if isinstance(v, str) else DYN for v in self.fold(node, depth)]

    def sequences(self, node: ast.expr, depth: int) -> list[tuple[str, ...]]:
        return [v if isinstance(v, tuple) else (DYN,) for v in self.fold(node, depth)]

    def name(self, name: str, depth: int) -> list[Value]:
        if name in self._active:
            return [DYN]
        self._active.add(name)
        try:
            alternatives: list[Value] = []
            for kind, value in self._events.get(name, []):
                if kind == "set":
                    alternatives.extend(self.fold(value, depth))
                elif alternatives:
                    alternatives = _add(alternatives, kind, self, value, depth)
            return alternatives[:_MAX_ALTERNATIVES] or [DYN]
        finally:
            self._active.discard(name)


def _only_str(values: list[Value]) -> str | None:
    return values[0] if len(values) == 1 and isinstance(values[0], str) else None


def _add(
    alternatives: list[Value], kind: str, folder: Folder, node: ast.expr, depth: int
) -> list[Value]:
    out: list[Value] = []
    for base, extra in itertools.product(alternatives, folder.fold(node, depth)):
        if kind in ("append", "insert") and isinstance(base, tuple):
            out.append((*base, extra if isinstance(extra, str) else DYN))
        else:
            out.append(_concat(base, extra))
    return out[:_MAX_ALTERNATIVES]


def _concat(left: Value, right: Value) -> Value:
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, tuple) and isinstance(right, tuple):
        return left + right
    return DYN


def _product(parts: list[list[Value]]) -> list[tuple[Value, ...]]:
    return list(itertools.islice(itertools.product(*parts), _MAX_ALTERNATIVES))


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
        return ["".join(p) for p in _product(parts)]  # type: ignore[arg-type]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return _sequence(folder, node.elts, depth)
    if isinstance(node, ast.IfExp):
        return folder.fold(node.body, depth) + folder.fold(node.orelse, depth)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        pairs = itertools.product(folder.fold(node.left, depth), folder.fold(node.right, depth))
        return [_concat(a, b) for a, b in itertools.islice(pairs, _MAX_ALTERNATIVES)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _percent(folder, node, depth)
    if isinstance(node, ast.Call):
        return _call(folder, node, depth)
    return [DYN]


def _sequence(folder: Folder, elements: list[ast.expr], depth: int) -> list[Value]:
    parts: list[list[tuple[str, ...]]] = []
    for element in elements:
        if isinstance(element, ast.Starred):
            parts.append(folder.sequences(element.value, depth))
        else:
            parts.append([(s,) for s in folder.strings(element, depth)])
    return [tuple(itertools.chain.from_iterable(p)) for p in _product(parts)]  # type: ignore[arg-type]


def _percent(folder: Folder, node: ast.BinOp, depth: int) -> list[Value]:
    right = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
    args = _product([folder.strings(r, depth) for r in right])  # type: ignore[list-item]
    out: list[Value] = []
    for fmt, values in itertools.product(folder.strings(node.left, depth), args):
        try:
            out.append(fmt % values)
        except (TypeError, ValueError):
            out.append(DYN)
    return out


def _call(folder: Folder, node: ast.Call, depth: int) -> list[Value]:
    func = folder.dotted(node.func)
    args = node.args
    if func in ("str", "os.fspath", "shutil.which", "pathlib.Path", "Path") and args:
        return folder.fold(args[0], depth)
    if func == "shlex.split" and args:
        return [_safe(lambda s=s: tuple(shlex.split(s))) for s in folder.strings(args[0], depth)]
    if func == "shlex.join" and args:
        return [shlex.join(seq) for seq in folder.sequences(args[0], depth)]
    if func in ("base64.b64decode", "base64.b32decode", "base64.b16decode") and args:
        decode = getattr(base64, func.split(".")[1])
        return [
            _safe(lambda s=s: decode(s).decode("latin-1")) for s in folder.strings(args[0], depth)
        ]
    if func == "chr" and len(args) == 1:
        return [_safe(lambda s=s: chr(int(s))) for s in folder.strings(args[0], depth)]
    if isinstance(node.func, ast.Attribute):
        return _method(folder, node.func.attr, node.func.value, args, depth)
    return [DYN]


def _method(
    folder: Folder, method: str, owner: ast.expr, args: list[ast.expr], depth: int
) -> list[Value]:
    if method == "join" and len(args) == 1:
        pairs = itertools.product(folder.strings(owner, depth), folder.sequences(args[0], depth))
        return [sep.join(seq) for sep, seq in itertools.islice(pairs, _MAX_ALTERNATIVES)]
    if method == "split" and not args:
        return [tuple(s.split()) for s in folder.strings(owner, depth)]
    if method == "format":
        values = _product([folder.strings(a, depth) for a in args])  # type: ignore[list-item]
        pairs = itertools.product(folder.strings(owner, depth), values)
        return [
            _safe(lambda f=f, v=v: f.format(*v))
            for f, v in itertools.islice(pairs, _MAX_ALTERNATIVES)
        ]
    if method in ("decode", "strip", "lower") and not args:
        return [
            getattr(s, method)() if method != "decode" else s for s in folder.strings(owner, depth)
        ]
    if method == "fromhex" and len(args) == 1:
        return [
            _safe(lambda s=s: bytes.fromhex(s).decode("latin-1"))
            for s in folder.strings(args[0], depth)
        ]
    return [DYN]


def _safe(make: object) -> Value:
    try:
        return make()  # type: ignore[operator]
    except (ValueError, TypeError, IndexError, KeyError, binascii.Error, UnicodeError):
        return DYN
