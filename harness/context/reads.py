"""What a task's context tools read, as fingerprints of the files' bytes.

Recorded with each round's results, so a later night can tell whether a task that passed
read a file that has since changed (carry-over treats it as up to date only if not). A
folder listed or searched is not a read file: a file added to it later is not a change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

__all__ = ["changed", "fingerprint"]


def fingerprint(path: Path, data: bytes | None = None) -> str:
    """`f:<sha256>` of a file's bytes (`data`: as already read), `-` when it is missing or
    unreadable."""
    if data is None:
        try:
            data = path.read_bytes()
        except OSError:
            return "-"
    return "f:" + hashlib.sha256(data).hexdigest()


def changed(reads: Mapping[str, str]) -> str | None:
    """The first path (sorted) whose fingerprint differs now from the recorded one, or None."""
    return next((p for p in sorted(reads) if fingerprint(Path(p)) != reads[p]), None)
