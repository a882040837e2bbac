"""The test side's log of the calls the tests make into the candidate's module-level
functions, for the differential check (harness/testrun/differential.py).

Each call is one JSON line: the function's module and name, and its arguments as the codec
nodes that crossed. Only the inputs are kept: the harness replays them itself on a fresh
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
_state: dict[str, Any] = {"path": None, "written": 0}


def configure(path: str | None) -> None:
    """Called by the test side's configure: where the calls are appended (None: nowhere)."""
    _state["path"], _state["written"] = path, 0


def call(target: tuple, fields: dict) -> None:
    """The tests called `target` (("fn", module, qualname)) with `fields` (codec nodes)."""
    path = _state["path"]
    if path is None or target[:1] != ("fn",) or "." in str(target[2]):
        return
    with contextlib.suppress(Exception):
        entry = {"m": target[1], "f": target[2], "a": fields.get("a", []), "k": fields.get("k")}
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        if _state["written"] + len(line) > MAX_BYTES:
            return
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW  # never a planted link
        fd = os.open(path, flags, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        _state["written"] += len(line)
