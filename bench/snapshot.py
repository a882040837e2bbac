"""Run the bench against a frozen copy of the sources, so edits made while it runs (six
minutes or more) cannot mix two versions of the harness into one set of figures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.machine import PROVENANCE_ENV, code_version

__all__ = ["freeze", "run_frozen"]

ROOT = Path(__file__).resolve().parent.parent
# What a bench run imports or reads: the package (prompts sit beside it in a checkout), the
# example tasks, the bench, and the hostile-task fixture bench_sandbox.py measures with.
FROZEN = ("harness", "prompts", "tasks/example", "bench", "tests/hostile")
_IGNORE = shutil.ignore_patterns("__pycache__", ".ruff_cache", "out", "results")


def freeze(target: Path, root: Path = ROOT) -> Path:
    """Copy the sources the bench runs to `target`; returns it."""
    for part in FROZEN:
        if (root / part).is_dir():
            shutil.copytree(root / part, target / part, ignore=_IGNORE)
    return target


def run_frozen(argv: list[str], scratch: Path) -> int:
    """Re-run `python -m bench ARGV --frozen` inside a frozen copy; returns its exit code.
    The copy comes first on PYTHONPATH, ahead of the editable install's finder."""
    provenance = code_version()  # of the live checkout, before the copy
    src = freeze(scratch / "src")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")])),
        PROVENANCE_ENV: json.dumps(provenance),
    }
    cmd = [sys.executable, "-m", "bench", *argv, "--frozen"]
    return subprocess.run(cmd, cwd=src, env=env, check=False).returncode
