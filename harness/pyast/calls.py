"""Folding calls: path joins, str.join/format/split, shlex, base64, chr and their kin."""

from __future__ import annotations

import ast
import base64
import itertools
import posixpath
import shlex

from harness.pyast.values import DYN, MAX_ALTERNATIVES, Folds, Value, product, safe

__all__ = ["fold_call"]

_PATHS = {"Path", "PurePath", "PosixPath", "PurePosixPath"}  # pathlib's, however imported
_JOINS = {"os.path.join", "posixpath.join"}
_DECODERS = {"base64.b64decode", "base64.b32decode", "base64.b16decode"}


def fold_call(folder: Folds, node: ast.Call, depth: int) -> list[Value]:
    """What a call returns, for the calls that only rearrange the text they are given."""
    func = folder.qualname(node.func) or ""
    args = node.args
    short = func.rpartition(".")[2] or getattr(node.func, "attr", "")
    if func in ("str", "os.fspath", "shutil.which") and args:
        return folder.fold(args[0], depth)
    if args and (short in _PATHS or func in _JOINS or (short == "join" and len(args) > 1)):
        parts = product([folder.strings(a, depth) for a in args])
        return [posixpath.join(*p) for p in parts]  # type: ignore[arg-type]
    if func == "shlex.split" and args:
        return [safe(lambda s=s: tuple(shlex.split(s))) for s in folder.strings(args[0], depth)]
    if func == "shlex.join" and args:
        return [shlex.join(seq) for seq in folder.sequences(args[0], depth)]
    if func in _DECODERS and args:
        decode = getattr(base64, func.split(".")[1])
        return [
            safe(lambda s=s: decode(s).decode("latin-1")) for s in folder.strings(args[0], depth)
        ]
    if func == "chr" and len(args) == 1:
        return [safe(lambda s=s: chr(int(s))) for s in folder.strings(args[0], depth)]
    if isinstance(node.func, ast.Attribute):
        return _method(folder, node.func.attr, node.func.value, args, depth)
    return [DYN]


def _method(
    folder: Folds, method: str, owner: ast.expr, args: list[ast.expr], depth: int
) -> list[Value]:
    if method == "join" and len(args) == 1:
        pairs = itertools.product(folder.strings(owner, depth), folder.sequences(args[0], depth))
        return [sep.join(seq) for sep, seq in itertools.islice(pairs, MAX_ALTERNATIVES)]
    if method == "split" and not args:
        return [tuple(s.split()) for s in folder.strings(owner, depth)]
    if method == "format":
        values = product([folder.strings(a, depth) for a in args])
        pairs = itertools.product(folder.strings(owner, depth), values)
        return [
            safe(lambda f=f, v=v: f.format(*v))
            for f, v in itertools.islice(pairs, MAX_ALTERNATIVES)
        ]
    if method in ("decode", "strip", "lower") and not args:
        return [
            getattr(s, method)() if method != "decode" else s for s in folder.strings(owner, depth)
        ]
    if method == "fromhex" and len(args) == 1:
        return [
            safe(lambda s=s: bytes.fromhex(s).decode("latin-1"))
            for s in folder.strings(args[0], depth)
        ]
    return [DYN]
