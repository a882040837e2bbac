"""The scratch tree of one test run: pristine inputs copied fresh, hash-checked, read-only."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.keys import is_secret_file
from harness.tasks import TaskSpec

__all__ = [
    "RUN_MARKER",
    "RUN_PREFIX",
    "Pristine",
    "SandboxError",
    "build_files",
    "build_tree",
    "read_pristine",
    "remove_tree",
    "sweep_stale",
    "verify_tree",
]

_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".git"}
# Names that would let a candidate run before the recorder or reconfigure pytest.
_RESERVED_FILES = {
    "conftest.py",
    "pytest.py",
    "sitecustomize.py",
    "usercustomize.py",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
    "setup.py",
    "__main__.py",
}
_RESERVED_MODULES = {"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "conftest"}


RUN_PREFIX = "harness-test-"
RUN_MARKER = ".harness-run"  # in every run folder: the stale sweep touches nothing without it


class SandboxError(RuntimeError):
    """A harness-side fault: the sandbox cannot be set up (never the candidate's doing)."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Pristine:
    """The task's tests and support files as bytes, keyed by their place in the scratch tree."""

    files: tuple[tuple[str, bytes], ...]
    tests: tuple[str, ...]  # the test files' scratch-relative paths, pytest's arguments
    origins: tuple[str, ...] = ()  # where they were read from (kept from candidate code too)
    hidden: tuple[str, ...] = ()  # the hidden test files among `tests`
    support: tuple[str, ...] = ()  # the files that came from the task's `support`

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for rel, data in self.files:
            h.update(f"{rel}\0{sha256(data)}\0".encode())
        return h.hexdigest()


def _place(path: Path, base: Path) -> str:
    try:
        return PurePosixPath(path.resolve().relative_to(base.resolve())).as_posix()
    except ValueError:
        return path.name


def _walk(folder: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if not name.endswith((".pyc", ".pyo")):
                yield Path(dirpath, name)


def read_pristine(task: TaskSpec) -> Pristine:
    """Read tests and support (files or whole folders) once; what is hashed is what is copied."""
    files: dict[str, bytes] = {}
    origins: list[str] = []
    support: list[str] = []
    for n, source in enumerate((*task.tests, *task.hidden_tests, *task.support)):
        if not source.exists():
            raise SandboxError(f"task {task.id}: input {source} does not exist")
        for path in _walk(source) if source.is_dir() else (source,):
            if path != source and is_secret_file(path.resolve()):
                continue  # a credential file inside a folder: never copied into a sandbox
            files[_place(path, task.base_dir)] = path.read_bytes()
            origins.append(str(path.resolve()))
            if n >= len(task.tests) + len(task.hidden_tests):
                support.append(_place(path, task.base_dir))
    tests = tuple(
        dict.fromkeys(_place(t, task.base_dir) for t in (*task.tests, *task.hidden_tests))
    )
    hidden = tuple(_place(t, task.base_dir) for t in task.hidden_tests)
    return Pristine(
        tuple(sorted(files.items())), tests, tuple(origins), hidden, tuple(dict.fromkeys(support))
    )


def candidate_place(task: TaskSpec, pristine: Pristine) -> str:
    """The candidate's scratch-relative path; refuse one that could shadow pytest or a test."""
    rel = PurePosixPath(task.output_rel.as_posix())
    problem = None
    if rel.is_absolute() or ".." in rel.parts or rel.suffix != ".py":
        problem = "must be a relative .py path inside the task list's folder"
    elif rel.name in _RESERVED_FILES or rel.stem in _RESERVED_MODULES:
        problem = f"{rel.name!r} would shadow pytest or its configuration"
    elif rel.stem in sys.stdlib_module_names and rel.parent == PurePosixPath("."):
        problem = f"{rel.stem!r} would shadow the standard library module of that name"
    elif rel.as_posix() in dict(pristine.files):
        problem = "it is the path of a test or support file"
    if problem:
        raise SandboxError(f"task {task.id}: output {task.output_rel} is not usable: {problem}")
    return rel.as_posix()


def _write_files(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _lock(root: Path) -> None:
    """Files 0444, folders 0555: the sandbox user (not the owner) cannot add or change files."""
    for dirpath, _dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def build_tree(root: Path, pristine: Pristine, candidate_rel: str, code: str) -> None:
    """Lay out the tests, support and candidate under `root`, then verify and lock them."""
    files = dict(pristine.files)
    files[candidate_rel] = code.encode()
    build_files(root, files)


def build_files(root: Path, files: dict[str, bytes]) -> None:
    """Lay out exactly `files` under `root`, then verify and lock them."""
    root.mkdir(parents=True)
    _write_files(root, files)
    problems = verify_tree(root, files)
    if problems:
        raise SandboxError(f"scratch tree does not match its inputs: {problems[0]}")
    _lock(root)


def verify_tree(root: Path, files: dict[str, bytes]) -> list[str]:
    """Differences between the tree on disk and the files it must hold: edits, plants, deletions."""
    expected = {rel: sha256(data) for rel, data in files.items()}
    folders = {p.as_posix() for rel in files for p in PurePosixPath(rel).parents}
    problems = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if name in dirnames and not path.is_symlink():
                if rel not in folders:
                    problems.append(f"unexpected folder {rel}")
            elif rel not in expected:
                problems.append(f"unexpected file {rel}")
            elif not stat.S_ISREG(path.lstat().st_mode) or sha256(
                path.read_bytes()
            ) != expected.pop(rel):
                problems.append(f"modified file {rel}")
                expected.pop(rel, None)
    problems.extend(f"missing file {rel}" for rel in expected)
    return problems


def make_run_folder() -> Path:
    """A fresh run folder in the temp folder, marked as the harness's own."""
    path = Path(tempfile.mkdtemp(prefix=RUN_PREFIX))
    (path / RUN_MARKER).touch(mode=0o400)
    return path


def _ours(path: Path) -> bool:
    """A real folder (never a link to one) that this user created and marked as a run's."""
    me = os.geteuid()
    folder, marker = os.lstat(path), os.lstat(path / RUN_MARKER)
    return (
        stat.S_ISDIR(folder.st_mode)
        and folder.st_uid == me
        and stat.S_ISREG(marker.st_mode)
        and marker.st_uid == me
    )


def sweep_stale(max_age_s: float = 6 * 3600) -> int:
    """Remove run folders left by a harness that was killed outright (no run lasts hours).
    Only folders this user created and marked; a link planted under the same name, or a
    stranger's folder, is left as it is."""
    removed = 0
    for path in Path(tempfile.gettempdir()).glob(f"{RUN_PREFIX}*"):
        with contextlib.suppress(OSError):
            if _ours(path) and time.time() - os.lstat(path).st_mtime > max_age_s:
                remove_tree(path)
                removed += 1
    return removed


def remove_tree(path: Path) -> None:
    """Delete a run folder, restoring the write permission the lock removed. Best effort:
    whatever a candidate did to it, cleaning up must not fail the run. Never follows a link:
    os.walk does not descend into one, and a linked top is not walked at all."""
    if os.path.islink(path):
        return
    try:
        for dirpath, _dirnames, _filenames in os.walk(path):
            with contextlib.suppress(OSError):
                os.chmod(dirpath, stat.S_IRWXU)
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        subprocess.run(["rm", "-rf", "--", str(path)], check=False, capture_output=True)
