"""What the bench ran on: cores, memory, Python, sandbox, load. Part of every result."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "PROVENANCE_ENV",
    "code_version",
    "cpu_seconds",
    "describe",
    "load_average",
    "source_digest",
]


def _mem_total_mib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_seconds() -> dict[str, float]:
    """CPU time (user + sys) so far of this process and of its finished children (the test
    runs): on a shared machine a fairer measure of the bench's cost than its wall time."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "self": round(own.ru_utime + own.ru_stime, 1),
        "children": round(children.ru_utime + children.ru_stime, 1),
    }


def load_average() -> list[float] | None:
    """1, 5 and 15-minute load: other work on the machine skews every timing."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _git(*args: str) -> str | None:
    """Read-only git query about the checkout the bench ran from; None outside a checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        proc = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip()


PROVENANCE_ENV = "HARNESS_BENCH_PROVENANCE"  # the live checkout's code_version(), as JSON
_MEASURED = ("harness", "prompts", "tasks/example", "bench")
_SKIP = {"__pycache__", ".ruff_cache", "out", "results"}


def source_digest() -> str:
    """A hash of every file the bench runs (harness, prompts, example tasks, bench): equal at
    start and end means nobody changed the code under the bench while it ran."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for top in _MEASURED:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and not _SKIP & set(path.relative_to(root).parts):
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def code_version() -> dict[str, Any]:
    """The commit measured, how many files differed from it, and a digest of the sources."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": _git("rev-parse", "--short", "HEAD"),
        "modified_files": None if status is None else len(status.splitlines()),
        "source_digest": source_digest(),
    }


def _provenance() -> dict[str, Any]:
    """Where the measured code came from. In a frozen copy (bench/snapshot.py) git cannot
    see the checkout: the commit comes from the parent, the digest is of the copy."""
    inherited = os.environ.get(PROVENANCE_ENV)
    if not inherited:
        return code_version()
    live = json.loads(inherited)
    return {
        "commit": live["commit"],
        "modified_files": live["modified_files"],
        "source_digest": source_digest(),
        "live_source_digest": live["source_digest"],
        "frozen_copy": True,
    }


def describe() -> dict[str, Any]:
    """The machine, as docs/benchmarks.md reports it."""
    import harness
    from harness.testrun import sandbox_kind

    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_mib": _mem_total_mib(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "sandbox": sandbox_kind(),  # "bwrap": bubblewrap isolation active; "rlimits": not
        "load_average_at_start": load_average(),
        "code": {**_provenance(), "harness_imported_from": str(Path(harness.__file__).parent)},
    }
