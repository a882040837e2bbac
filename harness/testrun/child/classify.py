"""Whose code a frame runs, inside the sandbox, by its code's filename: library code (stdlib,
site-packages, the sandbox's own files), a test or support file, or candidate code (anything
else: the candidate's module, code it compiled, files it wrote).

One exception, by identity: code that library modules compiled from a string while they were
imported before any candidate or test code existed (dataclasses' generated methods, namedtuple)
is library code; `adopt` records it, and `classify(code)` knows it. Never hypothesis's: its
public settings let candidate code decide how hard a property is tried, so its strategies stay
the candidate's and a test that uses them is never trusted.
Everything else asks by filename: `classify(code)` for a code object, `classify(name)` for a
filename.

A file is library code by the sys.path entry it was imported through; "../" never counts, and
an entry reached through /proc/self/fd (the fallback's privilege drop) counts only while that
descriptor still names the same folder. Code cannot claim a library or test filename it does
not come from: files.py refuses to build or run such code. Imports: standard library only.
"""

from __future__ import annotations

import os
import sys
from types import CodeType, FunctionType, ModuleType, SimpleNamespace
from typing import Any

LIBRARY, TEST, CANDIDATE = 0, 1, 2


def build(library: list[str], boot_dir: str, test_files: list[str]):
    """classify(code or filename) -> LIBRARY | TEST | CANDIDATE, as a closure, and
    adopt(modules), which makes the string-compiled code they hold now library code (see the
    docstring); call adopt before any candidate or test code is imported."""
    by_name = _classifier(library, boot_dir, test_files)
    adopted: dict[int, Any] = {}
    code_type, type_, id_, lib = CodeType, type, id, LIBRARY

    def classify(what: Any) -> int:
        if type_(what) is code_type:
            return lib if adopted.get(id_(what)) is what else by_name(what.co_filename)
        return by_name(what)

    def adopt(modules: list[Any]) -> None:
        for code in _string_code(modules, by_name):
            adopted[id(code)] = code  # kept alive here, so its id is never another's

    return SimpleNamespace(classify=classify, adopt=adopt)


def _string_code(modules: list[Any], by_name: Any) -> list[Any]:
    """The code, nested code included, of the functions the modules and their classes hold
    whose filename is no library file's: what they compiled from strings."""
    found, todo = [], []
    for module in modules:
        if type(module) is not ModuleType or _steerable(module.__name__):
            continue
        for value in list(vars(module).values()):
            todo.append(value)
            if isinstance(value, type) and vars(value).get("__module__") == module.__name__:
                todo += list(vars(value).values())
    for value in todo:
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        mine = type(value) is FunctionType and not _steerable(value.__module__)
        code = value.__code__ if mine else None
        stack = [code] if code is not None and by_name(code.co_filename) == CANDIDATE else []
        while stack:
            code = stack.pop()
            found.append(code)
            stack += [c for c in code.co_consts if type(c) is CodeType]
    return found


def _steerable(name: object) -> bool:
    """A module of hypothesis (or one it made to compile code in): never adopted."""
    return type(name) is not str or name.partition(".")[0].startswith("hypothesis")


def _library_prefixes(library: list[str], boot_dir: str) -> tuple[str, ...]:
    """The sys.path entries (as strings: what co_filename will start with) that lead into the
    interpreter's own folders, and those folders themselves."""
    roots = tuple(p.rstrip("/") + "/" for p in library)
    entries = {p for p in sys.path if p and (os.path.realpath(p) + "/").startswith(roots)}
    return tuple(sorted({e.rstrip("/") + "/" for e in entries} | {*roots, boot_dir + "/"}))


def _classifier(library: list[str], boot_dir: str, test_files: list[str]):
    prefixes, lib, test, cand = _library_prefixes(library, boot_dir), LIBRARY, TEST, CANDIDATE
    fd_dirs = {}  # "/proc/self/fd/N/": (st_dev, st_ino) of N now
    for prefix in prefixes:
        if prefix.startswith("/proc/self/fd/"):
            n = int(prefix.split("/")[4])
            fd_dirs[f"/proc/self/fd/{n}/"] = n, _identity(os.fstat(n))
    frozen = _frozen_filenames()
    tests, cache, fstat, str_, type_ = frozenset(test_files), {}, os.fstat, str, type
    identity, oserror = _identity, OSError

    def fd_still_ours(filename: str) -> bool:
        head = "/".join(filename.split("/", 5)[:5]) + "/"
        n, ident = fd_dirs.get(head, (-1, None))
        try:
            return n >= 0 and identity(fstat(n)) == ident
        except oserror:
            return False

    def classify(filename: Any) -> int:
        kind = cache.get(filename) if type_(filename) is str_ else cand
        if kind is not None:
            return kind
        if filename in frozen:
            kind = lib
        elif filename in tests:
            kind = test
        elif "/../" in filename or "/./" in filename or "//" in filename:
            kind = cand
        elif filename.startswith("/proc/self/fd/"):  # never cached: checked every time
            return lib if filename.startswith(prefixes) and fd_still_ours(filename) else cand
        else:
            kind = lib if filename.startswith(prefixes) else cand
        cache[filename] = kind
        return kind

    return classify


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _frozen_filenames() -> frozenset[str]:
    """The filenames of the frozen modules' code (os, importlib's bootstrap, site...)."""
    names = set()
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        if getattr(spec, "origin", None) == "frozen":
            names |= {f"<frozen {spec.name}>", f"<frozen {module.__name__}>"}
            for value in vars(module).values():
                code = getattr(getattr(value, "__func__", value), "__code__", None)
                names.add(getattr(code, "co_filename", ""))
    return frozenset(n for n in names if n.startswith("<frozen "))
