"""The words of a test report, inside the sandbox: the exception line and a short traceback
through the tests and the candidate (library frames dropped), capped for a fix prompt.
Imports: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_MAX_DETAIL_LINES = 60
_HEAD_LINES = 12


def cap_lines(text: str, limit: int = _MAX_DETAIL_LINES) -> str:
    """Keep the head and the tail (where the E lines are) of a long traceback."""
    lines = text.rstrip().splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    tail = limit - _HEAD_LINES - 1
    omitted = len(lines) - _HEAD_LINES - tail
    return "\n".join([*lines[:_HEAD_LINES], f"... ({omitted} lines omitted)", *lines[-tail:]])


_FRAME = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+|\?+): in \S+")


def drop_library_frames(text: str, is_library: Callable[[str], bool]) -> str:
    """Keep the frames of the tests and the candidate; pytest's, importlib's and the stdlib's
    own frames are noise in a fix prompt."""
    kept, skipping = [], False
    for line in text.splitlines():
        frame = _FRAME.match(line)
        if frame:
            path = frame.group("path")
            skipping = path.startswith("<") or is_library(path)
        elif not line.startswith((" ", "\t")) or not line.strip():
            skipping = skipping and not line.startswith("E ")
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def describe(
    longrepr: Any, is_library: Callable[[str], bool], collecting: bool = False
) -> tuple[str, str]:
    """(message, details) of a report's longrepr: the exception line and the short traceback."""
    if longrepr is None:
        return "", ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        return str(longrepr[2]), ""
    text = drop_library_frames(str(longrepr), is_library)
    e_lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    crash = getattr(longrepr, "reprcrash", None)
    message = "" if collecting else (getattr(crash, "message", "") or "").strip()
    message = message.splitlines()[0] if message else (e_lines[-1] if e_lines else "")
    if message.startswith("assert "):
        message = f"AssertionError: {message}"
    return message[:500], cap_lines(text)
