"""The test side's log of the calls the tests make into the candidate, for the differential
check (harness/testrun/differential.py): calls of its module-level functions, of its classes
(an object made), and of the methods of its objects.

Each call is one JSON line, numbered (`n`): the function's module and name (`m`, `f`), or
the class's (`m`, `c`), or the object's key and the method's name (`o`, `x`); and the
arguments as the codec nodes that crossed (`a`, `k`). A call that gave back an object of
the candidate's is followed by a line `{"made": key, "by": n}`, the key by which the calls
on that object name it. Only the inputs are kept: the harness replays them itself on a fresh
candidate process and on the reference, so nothing in this file decides a result (it lives
in the shared folder, which the candidate can write too). Capped; never fails a test.
Standard library only (copied into the sandbox).
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

MAX_BYTES = 4 << 20
_state: dict[str, Any] = {"path": None, "written": 0, "n": 0}
_bound: dict[tuple, tuple[str, str]] = {}  # a bound method's key -> its object's key, name


def configure(path: str | None) -> None:
    """Called by the test side's configure: where the calls are appended (None: nowhere)."""
    _state["path"], _state["written"], _state["n"] = path, 0, 0
    _bound.clear()


def call(target: tuple, fields: dict) -> int | None:
    """The tests called `target` (("fn", module, qualname), or a method `bound` named)
    with `fields` (codec nodes); the call's number, for `made`."""
    method = _bound.get(target)
    if method is not None:
        return _entry({"o": method[0], "x": method[1]}, fields)
    if target[:1] != ("fn",) or "." in str(target[2]):
        return None
    return _entry({"m": target[1], "f": target[2]}, fields)


def bound(target: tuple | None, ref: tuple, name: str) -> None:
    """The tests read method `name` of the candidate's object `ref`: a function `target`
    (the test side's key of it), whose calls are then that object's method calls."""
    if target is not None and _state["path"] is not None and not name.startswith("_"):
        if len(_bound) >= 100_000:
            _bound.clear()
        _bound[target] = (_key(ref), name)


def construct(key: tuple, fields: dict) -> int | None:
    """The tests called the candidate's class `key` ((module, qualname, kind))."""
    if len(key) != 3 or "." in str(key[1]):
        return None
    return _entry({"m": key[0], "c": key[1]}, fields)


def method(ref: tuple | None, name: str, fields: dict) -> int | None:
    """The tests called method `name` of the candidate's object `ref` (remote.ref_of)."""
    if ref is None or name.startswith("_"):
        return None
    return _entry({"o": _key(ref), "x": name}, fields)


def made(n: int | None, ref: tuple | None) -> None:
    """Call `n` gave back the candidate's object `ref` (remote.ref_of of the value)."""
    if n is not None and ref is not None:
        _write({"made": _key(ref), "by": n})


def _key(ref: tuple) -> str:
    return f"{ref[1]}:{ref[2]}"  # (generation, id): unique in the test process's run


def _entry(head: dict, fields: dict) -> int | None:
    if _state["path"] is None:
        return None
    _state["n"] += 1
    n = _state["n"]
    entry = {"n": n, **head, "a": fields.get("a", []), "k": fields.get("k")}
    return n if _write(entry) else None


def _write(entry: dict) -> bool:
    path = _state["path"]
    if path is None:
        return False
    with contextlib.suppress(Exception):
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        if _state["written"] + len(line) > MAX_BYTES:
            return False
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW  # never a planted link
        fd = os.open(path, flags, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        _state["written"] += len(line)
        return True
    return False
