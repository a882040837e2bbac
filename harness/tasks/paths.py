"""The task list's paths: resolved once each, reads confined to its folder, outputs writable.

Inputs (reference, tests, examples, capabilities, solution, support) must resolve, symlinks
and `..` followed, inside the task list's folder or one of its `read_roots:`, because their
content is sent to a provider or copied into the test sandbox. Files shown to the model must
be regular UTF-8 files of at most MAX_SHOWN_BYTES; a support folder may hold only regular
files, folders and symlinks that stay inside the roots. Every answer is cached: a thousand
tasks sharing one support folder walk it once.
"""

from __future__ import annotations

import ast
import functools
import keyword
import os
import stat
import sys
from pathlib import Path

from harness.extract import Language
from harness.fsio import parent_problem
from harness.keys import is_secret_file
from harness.pyast import parse_module
from harness.tasks.yamlfile import file_kind

__all__ = ["MAX_SHOWN_BYTES", "MAX_SUPPORT_ENTRIES", "Paths"]

MAX_SHOWN_BYTES = 2**20  # ~250,000 tokens: more than a model reads, so a wrong file, not code
MAX_SUPPORT_ENTRIES = 10_000
# Basenames a candidate must not take: tests import it by basename, and pytest reads these.
_SHADOWED = frozenset(sys.stdlib_module_names) | {"conftest", "pytest", "_pytest", "pluggy"}


class Paths:
    """Resolves and checks the paths of one task list (folder `base`, file name `list_name`)."""

    def __init__(self, base: Path, list_name: str, read_roots: tuple[Path, ...] = ()) -> None:
        self.base = base
        self.roots = (base, *read_roots)
        self._name = list_name
        self._resolved: dict[str, Path | str] = {}
        self._inputs: dict[tuple[str, bool, bool, bool], str | None] = {}

    def resolve(self, rel: str) -> Path | str:
        """`rel` (relative to the task list) made absolute and resolved, or why it cannot be."""
        found = self._resolved.get(rel)
        if found is None:
            try:
                found = (self.base / rel).resolve()
            except (OSError, RuntimeError, ValueError) as exc:  # a NUL byte, a symlink loop
                found = f"{rel!r} cannot be resolved ({exc}); fix the path"
            self._resolved[rel] = found
        return found

    def check_input(
        self,
        rel: str,
        *,
        folder_ok: bool = False,
        shown: bool = True,
        python: bool = False,
        boundary: bool = False,
    ) -> str | None:
        """None if `rel` is an input the harness may read; else what is wrong and the fix.

        `folder_ok`: a whole folder is allowed (support); `shown`: the model reads the file,
        so it must be UTF-8 text of a sane size; `python`: a .py file must parse (tests);
        `boundary`: the task's candidate runs behind the value boundary, out of reach of
        anything the tests import (so property tests are fine).
        """
        key = (rel, folder_ok, shown, python, boundary)
        if key not in self._inputs:
            target = self.resolve(rel)
            if isinstance(target, str):
                self._inputs[key] = target
            elif not self._readable(target):
                self._inputs[key] = self._escapes(rel, target)
            else:
                problem = self._inspect(rel, target, folder_ok, shown)
                if problem is None and python and target.suffix == ".py" and target.is_file():
                    problem = _syntax(rel, target, boundary)
                self._inputs[key] = problem
        return self._inputs[key]

    def check_output(self, rel: str, language: Language | None) -> tuple[Path | None, list[str]]:
        """The resolved output path and what is wrong with it as a file the harness writes
        in `language` (None: unknown, reported elsewhere; only writability is checked)."""
        target = self.resolve(rel)
        if isinstance(target, str):
            return None, [target]
        if language is None or not language.is_python:
            named = _foreign_name(rel, target, language) if language else []
            return target, [*named, *self._writable(rel, target)]
        problems = []
        stem = target.stem
        if target.suffix != ".py" or not stem.isidentifier() or keyword.iskeyword(stem):
            problems.append(
                f"{rel!r} must be a .py file whose name is a valid module name (or set "
                "language: to the language it is written in)"
            )
        elif stem in _SHADOWED:
            problems.append(
                f"{rel!r} is named like the module {stem!r} that Python or pytest itself "
                f"imports, and tests import the candidate by basename; rename it, e.g. "
                f"{stem}_port.py"
            )
        problems.extend(self._writable(rel, target))
        return target, problems

    def _readable(self, target: Path) -> bool:
        return any(target.is_relative_to(root) for root in self.roots)

    def _escapes(self, rel: str, target: Path) -> str:
        return (
            f"{rel!r} resolves to {target}, outside the task list's folder {self.base}; inputs "
            f"are read only from there: move the file inside, or add its folder to "
            f"read_roots: at the top of {self._name}"
        )

    def _inspect(self, rel: str, target: Path, folder_ok: bool, shown: bool) -> str | None:
        try:
            info = target.stat()
        except (FileNotFoundError, NotADirectoryError):
            where = f"looked for {target}; fix the path, relative to {self._name}"
            return f"{rel!r} does not exist ({where})"
        except OSError as exc:
            return f"{rel!r} cannot be read ({exc.strerror}); fix its permissions or the path"
        if stat.S_ISDIR(info.st_mode):
            if folder_ok:
                return self._folder(rel, target)
            return f"{rel!r} is a directory; name the file(s) in it, e.g. {rel.rstrip('/')}/x.py"
        if not stat.S_ISREG(info.st_mode):
            return f"{rel!r} is {file_kind(info.st_mode)}, not a regular file; name a regular file"
        if shown and is_secret_file(target):
            return (
                f"{rel!r} is named like a file that holds credentials, and it would be shown to "
                "the model; copy what the port needs into a file of another name"
            )
        return self._text(rel, target, info.st_size) if shown else None

    def _text(self, rel: str, target: Path, size: int) -> str | None:
        if size > MAX_SHOWN_BYTES:
            return (
                f"{rel!r} is {size / 2**20:.1f} MiB; files shown to the model are at most "
                f"{MAX_SHOWN_BYTES // 2**20} MiB: name the code to port, not a bundle or data"
            )
        try:
            with open(target, "rb") as stream:
                data = stream.read(MAX_SHOWN_BYTES + 1)
        except OSError as exc:
            return f"{rel!r} cannot be read ({exc.strerror}); fix its permissions"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            return f"{rel!r} is not UTF-8 text (line {line}); save it as UTF-8"
        return None

    def _folder(self, rel: str, folder: Path) -> str | None:
        """Whatever in a support folder the sandbox could not copy, or that leads outside.

        Walked as the sandbox copies it, links followed; each folder's `chain` is the real
        paths of the folders it is reached through, so a link back into one of them (a loop,
        which would copy forever) is refused before the walk follows it."""
        count = 0
        chains = {str(folder): frozenset({folder.resolve()})}
        for parent, dirs, files in os.walk(folder, followlinks=True):
            chain = chains.pop(parent)
            for name in (*dirs, *files):
                count += 1
                if count > MAX_SUPPORT_ENTRIES:
                    return (
                        f"{rel!r} holds more than {MAX_SUPPORT_ENTRIES:,} entries; name the "
                        "files and folders the tests need instead"
                    )
                entry = Path(parent) / name
                problem = self._entry(rel, folder, entry)
                if problem:
                    return problem
            for name in dirs:
                entry = Path(parent) / name
                real = entry.resolve()
                if real in chain:
                    shown = f"{rel.rstrip('/')}/{entry.relative_to(folder)}"
                    return (
                        f"{shown!r} leads back into {real} (a symlink loop): copying the "
                        "folder would never end; remove the link"
                    )
                chains[str(entry)] = chain | {real}
        return None

    def _entry(self, rel: str, folder: Path, entry: Path) -> str | None:
        shown = f"{rel.rstrip('/')}/{entry.relative_to(folder)}"
        try:
            mode = entry.lstat().st_mode
        except OSError as exc:
            return f"{shown!r} cannot be read ({exc.strerror})"
        if stat.S_ISLNK(mode):
            try:
                target = entry.resolve()
            except (OSError, RuntimeError) as exc:  # a symlink loop
                return f"{shown!r} cannot be resolved ({exc}); remove it"
            if not self._readable(target):
                return self._escapes(shown, target)
            if not target.exists():
                return f"{shown!r} is a symlink to {target}, which does not exist; remove it"
            return None
        if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
            return None
        return f"{shown!r} is {file_kind(mode)}; a support folder may hold only files and folders"

    def _writable(self, rel: str, target: Path) -> list[str]:
        try:
            info = target.stat()
        except (FileNotFoundError, NotADirectoryError):
            problem = parent_problem(repr(rel), target)
            return [problem] if problem else []
        except OSError as exc:
            return [f"{rel!r} cannot be checked ({exc.strerror}); fix the path"]
        if stat.S_ISDIR(info.st_mode):
            return [
                f"{rel!r} is a directory; name the .py file to write, e.g. {rel.rstrip('/')}/x.py"
            ]
        if not stat.S_ISREG(info.st_mode):
            return [
                f"{rel!r} is {file_kind(info.st_mode)}; the harness writes a regular file there, "
                "so remove it or choose another path"
            ]
        return []


def _foreign_name(rel: str, target: Path, language: Language) -> list[str]:
    """An output in another language: the language's suffix, and not named like a test."""
    suffixes = ", ".join(language.suffixes)
    if target.suffix not in language.suffixes:
        return [
            f"{rel!r} does not fit language {language.name} (its files end in {suffixes}); "
            f"rename it, e.g. {target.stem}{language.suffix}, or fix language:"
        ]
    if target.name.endswith(("_test.go", ".test.js", ".test.mjs", ".test.ts", ".spec.js")):
        return [f"{rel!r} is named like a test file, which the test runner would run; rename it"]
    return []


def _syntax(rel: str, target: Path, boundary: bool = False) -> str | None:
    """What keeps a Python test file from being collected: pytest would report an error for
    every candidate, so each paid attempt would score nothing."""
    try:
        text = target.read_text(encoding="utf-8")
    except ValueError as exc:  # not UTF-8
        return _not_python(rel, exc)
    except OSError as exc:
        return f"{rel!r} cannot be read ({exc.strerror}); fix its permissions"
    return _syntax_of(rel, text, boundary)


@functools.lru_cache(maxsize=128)
def _syntax_of(rel: str, text: str, boundary: bool) -> str | None:
    """_syntax of a file's text: once per text (every night validates the same tests)."""
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError) as exc:  # a NUL byte: ValueError before Python 3.12
        return _not_python(rel, exc)
    return None if boundary else _untrusted_import(rel, tree)


def _not_python(rel: str, exc: SyntaxError | ValueError) -> str:
    where = f"line {exc.lineno}: " if getattr(exc, "lineno", None) else ""
    why = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    return (
        f"{rel!r} is not valid Python ({where}{why}); fix the test file, or no candidate "
        "could pass it"
    )


def _untrusted_import(rel: str, tree: ast.Module) -> str | None:
    """A property-testing library the candidate could steer: hypothesis's own settings
    (examples, phases) decide how hard a property is tried, and candidate code can change
    them, so the sandbox never trusts its passes and every attempt would score nothing."""
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        if any(n.partition(".")[0] == "hypothesis" for n in names):
            return (
                f"{rel!r} imports hypothesis (line {node.lineno}): candidate code could steer "
                "it through its own settings when it runs in the test process, so the sandbox "
                "never trusts a property test in_process; give the task `isolation: boundary` "
                "(the candidate then runs in a process of its own), or write the properties "
                "as @pytest.mark.parametrize examples"
            )
    return None
