"""Expected test ids of a foreign runner, read statically from the pristine test files.

Static, not from a run: no candidate code (not even a stub, which Go or JavaScript could not
fake the way Python's module `__getattr__` does) runs while the ids are collected, so a
candidate cannot add, hide or rename a test. Collected once per distinct pristine content.

- Go (`go-json`): top-level `func TestXxx(t *testing.T)` in `_test.go` files, the ids `go test`
  reports for top-level tests (subtests are reported under their parent and not scored).
  Not seen: tests in files excluded by build constraints (they are reported as unexpected).
- JavaScript / TypeScript (`junit`, node:test, jest, mocha style): `test(...)` / `it(...)` calls
  (and `.skip`, `.only`, `.todo`) whose name is a string literal; the JUnit testcase name is the
  id. `describe` groups are not part of it, so names must be unique across a suite; subtests
  made with `t.test(...)` are not supported (the parent is reported as a suite).
Other runners have no collector: their ids are taken from the run's own report, with a warning.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from harness.testrun.scratch import Pristine, SandboxError

__all__ = ["Expected", "expected_ids"]

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"(?m)(^|[^:\\])//.*$")  # keeps "http://" inside strings
_GO_TEST = re.compile(r"(?m)^func\s+(Test(?![a-z])\w*)\s*\(\s*\w+\s+\*\s*testing\.T\s*\)\s*\{")
_JS_TEST = re.compile(
    r"""(?<![\w.$])(?:test|it)(?:\.(skip|only|todo))?\s*\(\s*"""
    r"""(?:'((?:\\.|[^'\\\n])*)'|"((?:\\.|[^"\\\n])*)"|`((?:\\.|[^`\\$])*)`)"""
)
_JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")


@dataclass(frozen=True)
class Expected:
    """The ids a run must report, in file order, and those from the hidden test files."""

    ids: tuple[str, ...] | None  # None: no collector for this runner
    hidden: frozenset[str] = frozenset()
    suite_skips: frozenset[str] = frozenset()  # declared skipped (test.skip): by the suite


def _strip_comments(text: str) -> str:
    return _LINE_COMMENT.sub(r"\1", _BLOCK_COMMENT.sub(" ", text))


def _go_ids(rel: str, text: str) -> list[tuple[str, bool]]:
    if not rel.endswith("_test.go"):
        return []
    return [(name, False) for name in _GO_TEST.findall(_strip_comments(text))]


def _js_ids(rel: str, text: str) -> list[tuple[str, bool]]:
    """(name, declared skipped) of each test()/it() call with a literal name."""
    if not rel.endswith(_JS_SUFFIXES):
        return []
    found = _JS_TEST.findall(_strip_comments(text))
    return [
        (next(g for g in names if g), mod in ("skip", "todo"))
        for mod, *names in found
        if any(names)
    ]


_COLLECTORS = {"go-json": _go_ids, "junit:javascript": _js_ids, "junit:typescript": _js_ids}
_lock = threading.Lock()
_cache: dict[tuple[str, str], Expected] = {}


def _collect(pristine: Pristine, key: str, task_id: str) -> Expected:
    collect = _COLLECTORS[key]
    files = dict(pristine.files)
    ids: list[str] = []
    hidden: set[str] = set()
    skips: set[str] = set()
    for given in pristine.tests:  # a test file, or a folder of them
        is_hidden = given in pristine.hidden
        for rel in sorted(r for r in files if r == given or r.startswith(f"{given}/")):
            found = collect(rel, files[rel].decode("utf-8", errors="replace"))
            ids.extend(name for name, _ in found)
            hidden.update(name for name, _ in found if is_hidden)
            skips.update(name for name, skipped in found if skipped)
    doubled = sorted({i for i in ids if ids.count(i) > 1})
    if doubled:
        raise SandboxError(
            f"task {task_id}: test names {doubled[:3]} occur more than once in its tests; "
            "a foreign runner scores tests by name, so rename them to be unique"
        )
    if not ids:
        raise SandboxError(
            f"task {task_id}: no tests found in {', '.join(pristine.tests)} (looked for "
            f"{'func TestXxx(t *testing.T)' if key == 'go-json' else 'test(...) / it(...)'} "
            "with a literal name); check the task's tests"
        )
    return Expected(tuple(ids), frozenset(hidden), frozenset(skips))


def expected_ids(pristine: Pristine, results: str, language: str, task_id: str) -> Expected:
    """The expected ids for these pristine tests and runner, cached by their content."""
    key = results if results == "go-json" else f"{results}:{language}"
    if key not in _COLLECTORS:
        return Expected(None)
    cache_key = (pristine.digest, key)
    with _lock:
        if cache_key in _cache:
            return _cache[cache_key]
    found = _collect(pristine, key, task_id)
    with _lock:
        _cache[cache_key] = found
    return found
