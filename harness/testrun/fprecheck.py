"""The static pre-check of a foreign candidate: refuse the few things the runner cannot catch.

Go: the verdict is a nonce only the harness's wrapper prints (gorun), and memory-safe Go
cannot read it. So a Go candidate may not leave memory safety or the package it is compiled
in: no import of `unsafe`, `syscall`, `golang.org/x/sys/...`, `os/exec`, `plugin` or `C`, and no
`//go:linkname`; nor import `embed`, without which no `//go:embed` directive compiles (it
would copy the test files, hidden ones included, into the binary at build time). Imports are
static in Go, so this is certain, not a guess; nothing else is refused (an `os.Exit` or a
forged transcript cannot produce a pass, so it is not checked).
JavaScript / TypeScript: the test file's process is the candidate's too, and one line
(`require('assert').strictEqual = () => {}`) would make failing tests pass. The check refuses
the obvious roads: the assertion and test modules, the module system's internals and cache,
computed `require`/`import`, exits, signals, child processes, workers, `vm`, the inspector and
`process[...]`. It is a speed bump, not a wall (docs/foreign-runners.md says what is left).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from harness.extract import syntax_tree, walk

__all__ = ["precheck_foreign"]

_GO_REFUSED = re.compile(r"syscall|unsafe|os/exec|plugin|golang\.org/x/sys(?:/.*)?|C|embed")


def _go_string(node: Node) -> str:
    """An import path as the compiler reads it: escapes decoded (`"un\\u0073afe"` is unsafe)."""
    raw = node.text.decode("utf-8", errors="replace") if node.text else ""
    if node.type == "raw_string_literal":
        return raw[1:-1]
    return raw[1:-1].encode("utf-8").decode("unicode_escape", errors="replace")


def _go(code: str) -> str:
    tree = syntax_tree(code, "go")
    if tree is None:
        return ""  # the build reports it
    paths: set[str] = set()
    for node in walk(tree.root_node):
        if node.type == "comment" and (node.text or b"").startswith(b"//go:linkname"):
            return "//go:linkname is not allowed in candidate code"
        if node.type == "import_spec":
            path = node.child_by_field_name("path")
            if path is not None:
                paths.add(_go_string(path))
    imports = sorted(p for p in paths if _GO_REFUSED.fullmatch(p))
    if imports:
        return f"importing {', '.join(imports)} is not allowed in candidate code"
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
