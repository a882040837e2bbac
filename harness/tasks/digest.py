"""The inputs digest of a task: equal digests mean a rerun would see exactly the same inputs.

Stable across runs and machines: only relative paths (POSIX form) and file contents go in,
never mtimes, absolute paths or directory listing order. Byte caches (`__pycache__`, .pyc,
.pytest_cache) inside support folders are left out: running the tests locally must not make
every task look changed and cost a night's budget.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from harness.tasks.spec import TaskSpec

__all__ = ["inputs_digest"]

_IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
_IGNORED_SUFFIXES = (".pyc", ".pyo")
_ROUTE_FIELDS = ("provider", "model", "max_tokens")


def _rel(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED_DIRS)
        for name in sorted(files):
            if not name.endswith(_IGNORED_SUFFIXES):
                yield Path(root) / name


def _files(paths: tuple[Path, ...]) -> Iterator[Path]:
    """Files as given, folders expanded; sorted afterwards by the caller's relative path."""
    for path in paths:
        yield from _walk(path) if path.is_dir() else (path,)


class _Hasher:
    """Length-prefixed fields, so no two different inputs can concatenate to the same bytes."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256(b"harness-inputs-v1")

    def field(self, name: str, value: str | bytes) -> None:
        data = value.encode() if isinstance(value, str) else value
        for part in (name.encode(), data):
            self._sha.update(len(part).to_bytes(8, "big"))
            self._sha.update(part)

    def files(self, name: str, paths: tuple[Path, ...], base: Path) -> None:
        entries = sorted((_rel(p, base), p) for p in _files(paths))
        self.field(name, str(len(entries)))
        for rel, path in entries:
            self.field(f"{name}:path", rel)
            self.field(f"{name}:content", path.read_bytes())

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


def _route(value: object) -> str:
    """provider/model/max_tokens of a Route or RouteConfig (or a mapping with those keys);
    a plain string (e.g. a step's tier) as itself."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return repr(tuple(value[f] for f in _ROUTE_FIELDS))
    return repr(tuple(getattr(value, f) for f in _ROUTE_FIELDS))


def inputs_digest(
    spec: TaskSpec,
    prompts_dir: Path,
    routes: Mapping[str, object],
    extra: Mapping[str, str] | None = None,
) -> str:
    """sha256 (hex) of everything that decides what a run of `spec` would do.

    `prompts_dir` is the prompts root (the task's templates are `prompts_dir/<type>/`);
    `routes` maps tier → route; `extra` is anything else whose change should make a passed
    task stale (e.g. the guardrails policy text). A missing input file raises OSError:
    validation has already promised they exist.
    """
    h, base = _Hasher(), spec.base_dir
    h.field("id", spec.id)
    h.field("type", spec.type)
    h.field("max_attempts", str(spec.max_attempts))
    h.field("instructions", spec.instructions)
    h.field("output", _rel(spec.output, base))
    h.files("reference", spec.reference, base)
    h.files("tests", spec.tests, base)
    h.files("support", spec.support, base)
    if spec.hidden_tests:  # only then: digests of tasks without them stay as they were
        h.files("hidden_tests", spec.hidden_tests, base)
    if spec.language != "python" or spec.test_command:  # likewise for Python's pytest path
        h.field("language", spec.language)
        h.field("test_command", "\0".join(spec.test_command))
        # The NUL once ended results_path (retired): kept so these digests stay as they were.
        h.field("results", f"{spec.results}\0")
    if spec.differential:  # only then: digests of tasks without the key stay as they were
        h.field("differential", repr(spec.differential))
    h.files("examples", spec.examples, base)
    h.files("capabilities", (spec.capabilities,) if spec.capabilities else (), base)
    h.files("solution", (spec.solution,) if spec.solution else (), base)
    templates = Path(prompts_dir) / spec.type
    h.files("prompts", (templates,), templates)
    for tier in sorted(routes):
        h.field(f"route:{tier}", _route(routes[tier]))
    for key, value in sorted((extra or {}).items()):
        h.field(f"extra:{key}", value)
    return h.hexdigest()
