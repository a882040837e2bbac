"""Compiled bytecode for the bootstrap files a sandbox launch is given.

Every launch runs `python -B` on a fresh copy of the bootstrap and the boundary's sandbox half
(`child/`, `boundary/`), in a folder it cannot write; without a `__pycache__` beside them each
process compiled about 3,000 lines of the harness's own Python before the first test ran. The
harness compiles each file once per process (keyed by its text) and writes a hash-checked
`.pyc` beside each copy: the interpreter reads it only when the hash of the source beside it
matches, so a stale or foreign `.pyc` is never run in place of the source.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from importlib._bootstrap_external import _code_to_hash_pyc  # the stdlib's own writer
from pathlib import Path

__all__ = ["write_pyc"]


@functools.lru_cache(maxsize=64)
def _pyc(source: bytes, name: str) -> bytes:
    # `name` is the file's own name, not its folder (a fresh one per launch): the loader
    # sets each code object's file name to where the source is when it reads the `.pyc`.
    code = compile(source, name, "exec", dont_inherit=True)
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), True))


def write_pyc(source_file: Path) -> None:
    """Write the checked-hash `.pyc` of `source_file` where the interpreter looks for it
    (`__pycache__/NAME.cpython-XY.pyc`), read-only; its folder must be writable now."""
    target = Path(importlib.util.cache_from_source(str(source_file)))
    target.parent.mkdir(mode=0o755, exist_ok=True)
    target.write_bytes(_pyc(source_file.read_bytes(), source_file.name))
    os.chmod(target, 0o444)
