"""The static pre-check of a foreign candidate: refuse the few things the runner cannot catch.

Go: a test binary's output is the candidate's too, so code that prints a whole passing
transcript and then exits 0 before any test runs (from `init` or a package variable) would
look exactly like an honest pass; every other way to fake one (forged lines next to the real
ones, a failing run that exits 0 through os.Exit during a test, which -test.paniconexit0 turns
into a panic) is caught by the scorer. So a Go candidate may not name `Exit` at all (os.Exit,
syscall.Exit, a method value, reflection on it), nor import what reaches the process or the
testing package around the type system (syscall, unsafe, os/exec, plugin, x/sys), nor use
`//go:linkname`. A ported library has no need of any of them.
JavaScript / TypeScript: the test file's process is the candidate's too, and one line
(`require('assert').strictEqual = () => {}`) would make failing tests pass. The check refuses
the obvious roads: the assertion and test modules, the module system's internals and cache,
computed `require`/`import`, exits, signals, child processes, workers, `vm`, the inspector and
`process[...]`. It is a speed bump, not a wall (docs/foreign-runners.md says what is left).
"""

from __future__ import annotations

import re

__all__ = ["precheck_foreign"]

# Strings and comments in one left-to-right pass, so neither can hide the other's end.
_GO_TEXT = re.compile(
    r'"(?:\\.|[^"\\\n])*"|`[^`]*`|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.DOTALL
)
_GO_LINKNAME = re.compile(r"//\s*go:linkname")
_GO_EXIT = re.compile(r"\bExit\b")
_GO_IMPORT_DECL = re.compile(r"\bimport\s*(\([^)]*\)|[\w.]*\s*[\"`][^\"`]*[\"`])")
_GO_PATH = re.compile(r'["`]([^"`]*)["`]')
_GO_REFUSED = re.compile(r"syscall|unsafe|os/exec|plugin|golang\.org/x/sys(?:/.*)?|C")


def _go(code: str) -> str:
    if _GO_LINKNAME.search(code):
        return "//go:linkname is not allowed in candidate code"
    no_comments = _GO_TEXT.sub(lambda m: m[0] if m[0][0] in "\"`'" else " ", code)
    paths = {p for d in _GO_IMPORT_DECL.findall(no_comments) for p in _GO_PATH.findall(d)}
    imports = sorted(p for p in paths if _GO_REFUSED.fullmatch(p))
    if imports:
        return f"importing {', '.join(imports)} is not allowed in candidate code"
    bare = _GO_TEXT.sub(" ", code)
    if _GO_EXIT.search(bare):
        return "candidate code may not name Exit (os.Exit, syscall.Exit): tests decide the exit"
    return ""


_JS_MODULES = re.compile(
    r"""(?:\brequire\s*\(|\bimport\s*\(|\bfrom|\bimport)\s*['"`]((?:node:)?(?:assert(?:/strict)?|test"""
    r"""|module|child_process|cluster|worker_threads|vm|inspector|v8|repl))['"`]"""
)
_JS_FORBIDDEN = re.compile(
    r"""\brequire\s*\.\s*cache\b|\bModule\s*\.\s*_|\bprocess\s*\[|\bprocess\s*\.\s*"""
    r"""(?:exit|reallyExit|kill|abort|binding|_linkedBinding|dlopen|exitCode)\b"""
    r"""|\b(?:require|import)\s*\(\s*(?!['"][^'"`]*['"]\s*\))"""
)


def _javascript(code: str) -> str:
    module = _JS_MODULES.search(code)
    if module:
        return f"candidate code may not load the module {module.group(1)!r}"
    found = _JS_FORBIDDEN.search(code)
    if found:
        return f"candidate code may not use {found.group(0).strip()!r} (the tests decide the run)"
    return ""


def precheck_foreign(language: str, code: str) -> str:
    """Why `code` is refused before running, or "" to run it."""
    if language == "go":
        return _go(code)
    return _javascript(code) if language in ("javascript", "typescript") else ""
