"""The tests' own files and code, inside the sandbox: candidate code may not open the tests,
hidden tests or conftest files, may only read the support files (what its own process holds
behind the boundary), may not open a folder holding any of them nor climb with "../" from a
folder it opened, and may not run code that claims to come from them or from the library.

Files are recognised by device and inode, so a link or another spelling of the path changes
nothing. Code is recognised by its filename, which the stack walk trusts, so compiling,
building or running code under a library or test filename is refused unless it is that file's
own code (an import compiling the library is). Built as closures at install, like `stack`.
Imports: standard library only.
"""

from __future__ import annotations

import _imp
import io
import os
import pathlib
import stat
import sys
from types import CodeType, SimpleNamespace
from typing import Any

_LIBRARY, _CANDIDATE = 0, 2


def build(
    protected: list[str], stack: SimpleNamespace, boot_dir: str, readable: tuple = ()
) -> SimpleNamespace:
    """`readable`: the protected files the candidate may read (the support files its own
    process holds behind the boundary: its package's other modules, the runtime it uses),
    never write; every other protected file it may not open at all."""
    files, folders = _identities(protected)
    may_read = _identities(list(readable))[0]
    access, writes = os.O_ACCMODE, os.O_CREAT | os.O_TRUNC | os.O_APPEND
    int_ = int
    asks, classify = stack.candidate_asks, stack.classify
    target = _path_reader()
    stat_, is_dir, str_, errors = os.stat, stat.S_ISDIR, str, (OSError, ValueError)

    def refused_open(args: tuple, caller: Any) -> str | None:
        path = target(args[0])
        if path == "":  # a file descriptor: nothing to resolve
            return None
        if path is None:
            return "open a path it cannot check (pass a str)" if asks(caller) else None
        try:
            st = stat_(path)
        except errors:
            climbs = args[1] is None and ".." in str_(path).split("/")  # os.open, maybe dir_fd
            return "climb out of a folder with ../" if climbs and asks(caller) else None
        here = (st.st_dev, st.st_ino)
        flags = args[2] if len(args) > 2 and type(args[2]) is int_ else -1
        if here in may_read and flags >= 0 and flags & access == os.O_RDONLY and not flags & writes:
            return None  # a support file, read (its own import of a sibling module, a table)
        if here in files or (is_dir(st.st_mode) and here in folders):
            return "open the tests' files" if asks(caller) else None
        return None

    files_of = (getattr(m, "__file__", None) for m in list(sys.modules.values()))
    loaded = {f for f in files_of if type(f) is str}
    loaded |= {os.path.join(boot_dir, n) for n in os.listdir(boot_dir)}

    def readable_file(name: Any) -> bool:
        try:
            st = stat_(name)
        except errors:
            return False
        return (st.st_dev, st.st_ino) in may_read

    spoofed_code = _code_checker(classify, asks, loaded, readable_file)
    return SimpleNamespace(refused_open=refused_open, spoofed_code=spoofed_code)


def _identities(paths: list[str]) -> tuple[frozenset, frozenset]:
    """(device, inode) of each protected file that exists here, and of every folder above it."""
    files, folders = set(), set()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:  # out of this sandbox's sight already
            continue
        files.add((st.st_dev, st.st_ino))
        parent = os.path.dirname(os.path.abspath(path))
        while True:
            try:
                st = os.stat(parent)
                folders.add((st.st_dev, st.st_ino))
            except OSError:
                pass
            if parent == "/":
                break
            parent = os.path.dirname(parent)
    return frozenset(files), frozenset(folders)


def _path_reader():
    """A path argument as a str or bytes, "" for a descriptor, None when reading it could run
    candidate code (its own __fspath__, or pathlib's methods after it rewrote them)."""
    plain = {str, bytes}
    exact = {os.DirEntry, *(c for c in vars(pathlib).values() if isinstance(c, type))}
    kept = [(vars(c), k, v) for c in exact for k, v in vars(c).items()]
    kept += [(vars(pathlib), k, v) for k, v in vars(pathlib).items()]
    flavour = getattr(pathlib, "_posix_flavour", None)
    kept += [(vars(flavour), k, v) for k, v in vars(flavour).items()] if flavour else []
    type_, int_, fspath, missing = type, int, os.fspath, object()

    def target(path: Any) -> Any:
        kind = type_(path)
        if kind in plain:
            return path
        if kind is int_:
            return ""
        if kind not in exact:
            return None
        for namespace, key, value in kept:
            if namespace.get(key, missing) is not value:
                return None
        return fspath(path)

    return target


def _code_checker(classify: Any, asks: Any, loaded: set[str], readable: Any = None):
    """compile/code.__new__/exec/function.__new__ events: a reason to refuse, or None.
    `loaded`: files whose code already ran (a second run would be a copy, not an import);
    `readable(filename)`: a support file the candidate may import (its own code, run once,
    as a library module's may be)."""
    readable = readable or (lambda name: False)
    lib, cand, open_code, compile_ = _LIBRARY, _CANDIDATE, io.open_code, compile
    frozen, type_, str_, bytes_, oserror = _imp.get_frozen_object, type, str, bytes, OSError
    code_type = CodeType
    executed = set(loaded)

    def immediate(frame: Any) -> bool:
        return classify(frame.f_code) == cand

    def read(filename: str) -> bytes | None:
        try:
            with open_code(filename) as fh:
                return fh.read()
        except oserror:
            return None

    def genuine(code: Any) -> bool:
        """Module code of a library file: the file's own code, run for the first time."""
        name = code.co_filename
        if name.startswith("<frozen "):
            return code == frozen(name[8:-1])
        source = read(name)
        return source is not None and code == compile_(source, name, "exec", dont_inherit=True)

    def spoofed(event: str, args: tuple, caller: Any) -> str | None:
        if event == "exec":
            name = args[0].co_filename
            again = name in executed
            executed.add(name)
            kind = classify(args[0])
            if kind == cand or not asks(caller):
                return None
            first = not again and genuine(args[0])
            return None if first and (kind == lib or readable(name)) else "run that code"
        name = args[0] if event == "function.__new__" else args[1]  # a code object or a name
        if type_(name) not in (str_, code_type) or classify(name) == cand:
            return None
        # Building code is refused only from the candidate's own frame (library code builds
        # code while the candidate imports); running it, whenever the candidate asks.
        if not (asks(caller) if event == "function.__new__" else immediate(caller)):
            return None
        if event == "compile" and classify(name) == lib and type_(args[0]) in (str_, bytes_):
            source = read(name)
            text = args[0] if type_(args[0]) is bytes_ else args[0].encode()
            return None if source == text else "compile code under a library file's name"
        verb = {"function.__new__": "build a function from", "code.__new__": "build"}
        return f"{verb.get(event, event)} code under a library or test file's name"

    return spoofed
