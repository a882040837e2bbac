"""One build per night: the night's task queue is named by the build that started it.

A build is a digest of the harness's code and data (every file of the package, and the
prompts it ships) and of the cluster's `scale` settings. `harness run` starts the night on
`<task_queue>.<build>`, and a worker serves only its own build's queue: a worker on another
commit (or with other cluster settings) never polls that night's queue, so it takes none of
its tasks, and the night waits for a worker of its own build (the worker's log names the
queue it serves). A boundary, not a check: there is no moment at which a mismatched worker
holds a task and has to refuse it.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from harness.config import ScaleConfig

__all__ = ["build_id", "night_queue"]

_PACKAGE = Path(__file__).resolve().parents[1]
_SKIPPED = {"__pycache__"}


def _files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and not _SKIPPED.intersection(p.parts))


@functools.cache
def _code_digest() -> str:
    """The digest of every file of the harness package and of its prompts (once a process)."""
    from harness.prompts import default_prompts_dir

    digest = hashlib.sha256()
    for label, root in (("harness", _PACKAGE), ("prompts", default_prompts_dir())):
        for path in _files(root):
            digest.update(f"{label}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def build_id(scale: ScaleConfig) -> str:
    """This process's build: its code's digest and the cluster settings', 12 hex digits."""
    settings = scale.model_dump_json().encode()
    return hashlib.sha256(_code_digest().encode() + settings).hexdigest()[:12]


def night_queue(scale: ScaleConfig) -> str:
    """The task queue of the nights this build starts and serves."""
    return f"{scale.temporal.task_queue}.{build_id(scale)}"
