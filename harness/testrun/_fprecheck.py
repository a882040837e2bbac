"""The static pre-check of a foreign candidate: refuse the few things the runner cannot catch.

Go: a test binary's output is the candidate's too, so code that prints a whole passing
transcript and then exits 0 before any test runs (from `init` or a package variable) would
look exactly like an honest pass; every other way to fake one (forged lines next to the real
ones, a failing run that exits 0 through os.Exit during a test, which -test.paniconexit0 turns
into a panic) is caught by the scorer. So a Go candidate may not name `Exit` at all (os.Exit,
syscall.Exit, a method value, reflection on it), nor import what reaches the process or the
testing package around the type system (syscall, unsafe, os/exec, plugin, x/sys), nor use
`//go:linkname`. A ported library has no need of any of them.
Other languages: no pre-check (see docs/foreign-runners.md for what that leaves open).
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
_GO_IMPORT = re.compile(r'["`](syscall|unsafe|os/exec|plugin|golang\.org/x/sys/[\w/]+|C)["`]')


def _go(code: str) -> str:
    if _GO_LINKNAME.search(code):
        return "//go:linkname is not allowed in candidate code"
    imports = sorted(set(_GO_IMPORT.findall(code)))
    if imports:
        return f"importing {', '.join(imports)} is not allowed in candidate code"
    bare = _GO_TEXT.sub(" ", code)
    if _GO_EXIT.search(bare):
        return "candidate code may not name Exit (os.Exit, syscall.Exit): tests decide the exit"
    return ""


def precheck_foreign(language: str, code: str) -> str:
    """Why `code` is refused before running, or "" to run it."""
    return _go(code) if language == "go" else ""
