"""Authoring-time checks remembered by content: a check whose inputs are unchanged is not run
again. One JSON file per check and key digest under `$XDG_CACHE_HOME/harness/checks/` (default
`~/.cache`); a file that cannot be read or written only costs a rerun.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from harness.fsio import write_log

__all__ = ["cache_dir", "code_digest", "content_key", "remembered"]

# Part of every key: a result the check's code of another version gave is never reused.
_VERSION = "1"


@functools.cache
def _code_digest() -> str:
    """A digest of the test runner's own code (this package, the sandbox's halves included):
    what a collection or a check answers depends on it, so an upgraded harness never reuses
    an answer its previous code gave."""
    return code_digest(Path(__file__).resolve().parent)


def code_digest(folder: Path) -> str:
    """A digest of the code files under `folder`: their paths and bytes."""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".py", ".cjs", ".js", ".go") and path.is_file():
            h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def cache_dir() -> Path:
    """Where remembered checks live (XDG_CACHE_HOME, read per call: tests move it)."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "harness" / "checks"


def content_key(*parts: str | bytes | Iterable[str]) -> str:
    """A digest of everything a check's outcome depends on."""
    h = hashlib.sha256(f"{_VERSION}\0{sys.version_info[:2]}\0{_code_digest()}".encode())
    for part in parts:
        items = [part] if isinstance(part, str | bytes) else list(part)
        for item in items:
            data = item if isinstance(item, bytes) else item.encode()
            h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def remembered(check: str, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()` (a JSON value), or what it returned when last run with the same key."""
    path = cache_dir() / check / f"{key}.json"
    try:
        return json.loads(path.read_text())["value"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    value = compute()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_log(path, json.dumps({"value": value}))
    except OSError:
        pass  # remembering is an optimisation
    return value
