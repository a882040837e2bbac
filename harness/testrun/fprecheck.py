"""The static pre-check of a foreign candidate: refuse the few things the runner cannot catch.

Go: the verdict is a nonce only the harness's wrapper prints (gorun), and memory-safe Go
cannot read it. So a Go candidate may not leave memory safety or the package it is compiled
in: no import of `unsafe`, `syscall`, `golang.org/x/sys/...`, `os/exec`, `plugin` or `C`, and no
`//go:linkname`; nor import `embed`, without which no `//go:embed` directive compiles (it
would copy the test files, hidden ones included, into the binary at build time). Nor, by the
guardrails policy (`refused_go_packages`, less what it allows the task), the packages that
reach the binary's arguments, output and runtime from `init()`: `os`, `flag`, `reflect`,
`runtime` and their subpackages. Imports are static in Go, so this is certain, not a guess (an
`os.Exit` or a forged transcript cannot produce a pass, so it is not checked).
JavaScript / TypeScript: the test file's process is the candidate's too, and one line
(`require('assert').strictEqual = () => {}`) would make failing tests pass. The check refuses
the obvious roads: the node built-ins the guardrails policy lists (`refused_js_modules`, minus
what it allows the task: the assertion and test modules, the module system, the file system,
child processes, workers, `vm`, the inspector, ...), the module cache, computed
`require`/`import`, exits, signals and `process[...]`, read in code only (comments and the
text of literals are not code: an honest file may name them there). Behind the boundary
(jsrun) the candidate runs in a process of its own and none of this decides a verdict: it is a
first filter, not the guarantee (docs/foreign-runners.md says what is left).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from harness.extract import syntax_tree, walk
from harness.guardrails import shipped_refused_go_packages, shipped_refused_js_modules

__all__ = ["precheck_foreign"]

_GO_REFUSED = re.compile(r"syscall|unsafe|os/exec|plugin|golang\.org/x/sys(?:/.*)?|C|embed")


def _go_string(node: Node) -> str:
    """An import path as the compiler reads it: escapes decoded (`"un\\u0073afe"` is unsafe)."""
    raw = node.text.decode("utf-8", errors="replace") if node.text else ""
    if node.type == "raw_string_literal":
        return raw[1:-1]
    return raw[1:-1].encode("utf-8").decode("unicode_escape", errors="replace")


def _go_refused(path: str, refused: frozenset[str]) -> bool:
    """Whether an import path is refused: always (memory safety, embedding), or by the
    policy's list, which names packages with their subpackages."""
    if _GO_REFUSED.fullmatch(path):
        return True
    return any(path == p or path.startswith(p + "/") for p in refused)


def _go(code: str, refused: frozenset[str]) -> str:
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
    imports = sorted(p for p in paths if _go_refused(p, refused))
    if imports:
        return f"importing {', '.join(imports)} is not allowed in candidate code"
    return ""


# Any module specifier in text, for code the grammar cannot read: checked against the list.
_JS_MODULES = re.compile(
    r"""(?:\brequire\s*\(|\bimport\s*\(|\bfrom|\bimport)\s*['"`]([^'"`]*)['"`]"""
)
_JS_FORBIDDEN = re.compile(
    r"""\brequire\s*\.\s*cache\b|\bModule\s*\.\s*_|\bprocess\s*\[|\bprocess\s*\.\s*"""
    r"""(?:exit|reallyExit|kill|abort|binding|_linkedBinding|dlopen|exitCode)\b"""
    r"""|\b(?:require|import)\s*\(\s*(?!['"][^'"`]*['"]\s*\))"""
)
_JS_ESCAPE = re.compile(
    r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[0-7]{1,3}|.)", re.DOTALL
)
_JS_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _js_unescape(match: re.Match[str]) -> str:
    body = match.group(1)
    if body.startswith("u{"):
        return chr(int(body[2:-1], 16)) if int(body[2:-1], 16) < 0x110000 else ""
    if body[0] in "ux" and len(body) > 1:
        return chr(int(body[1:], 16))
    if body.isdigit():
        return chr(int(body, 8))
    return _JS_SIMPLE.get(body, "" if body == "\n" else body)


def _js_literal(node: Node | None) -> str | None:
    """A string literal's value as node reads it (escapes decoded), or None if computed."""
    if node is None or node.type not in ("string", "template_string"):
        return None
    if any(c.type == "template_substitution" for c in node.children):
        return None
    raw = (node.text or b"").decode("utf-8", errors="replace")[1:-1]
    return _JS_ESCAPE.sub(_js_unescape, raw)


def _js_specifiers(root: Node) -> Iterator[tuple[str | None, int]]:
    """Every module specifier (None: computed) with its line: import/export sources,
    require(...) and import(...)."""
    for node in walk(root):
        line = node.start_point[0] + 1
        if node.type in ("import_statement", "export_statement"):
            source = node.child_by_field_name("source")
            if source is not None:
                yield _js_literal(source), line
        elif node.type == "call_expression":
            func = node.child_by_field_name("function")
            named = func is not None and (func.type == "import" or func.text == b"require")
            args = node.child_by_field_name("arguments")
            if named and args is not None:
                first = next((c for c in args.named_children if c.type != "comment"), None)
                yield _js_literal(first), line


def _javascript_tree(root: Node, refused: frozenset[str]) -> str:
    for spec, line in _js_specifiers(root):
        if spec is None:
            return f"line {line}: a computed require/import (the module must be a literal)"
        if spec.removeprefix("node:") in refused:
            return f"line {line}: candidate code may not load the module {spec!r}"
    return ""


# What the text check does not read as code: comments, and the text inside string, template and
# regular-expression literals (a template's ${...} stays code).
_NOT_CODE = ("comment", "string_fragment", "escape_sequence", "regex_pattern", "html_comment")


def _code_only(code: str, root: Node) -> str:
    """`code` with every comment and literal's text blanked (same length, lines kept)."""
    data = bytearray(code.encode("utf-8"))
    for node in walk(root):
        if node.type in _NOT_CODE:
            for at in range(node.start_byte, node.end_byte):
                if data[at] not in (10, 13):
                    data[at] = 32
    return data.decode("utf-8", errors="replace")


def _javascript(code: str, grammar: str, refused: frozenset[str]) -> str:
    tree = syntax_tree(code, grammar)
    if tree is not None:
        found = _javascript_tree(tree.root_node, refused)
        if found:
            return found
        code = _code_only(code, tree.root_node)
    else:  # a tree the grammar cannot read: the text checks alone
        for module in _JS_MODULES.finditer(code):
            if module.group(1).removeprefix("node:") in refused:
                return f"candidate code may not load the module {module.group(1)!r}"
    found_api = _JS_FORBIDDEN.search(code)
    if found_api:
        return (
            f"candidate code may not use {found_api.group(0).strip()!r} (the tests decide the run)"
        )
    return ""


def precheck_foreign(
    language: str,
    code: str,
    js_refused: frozenset[str] | None = None,
    go_refused: frozenset[str] | None = None,
) -> str:
    """Why `code` is refused before running, or "" to run it. `js_refused`: the node built-ins
    a JavaScript/TypeScript candidate may not load; `go_refused`: the packages a Go candidate
    may not import (None: the shipped policy's list)."""
    if language == "go":
        return _go(code, shipped_refused_go_packages() if go_refused is None else go_refused)
    if language not in ("javascript", "typescript"):
        return ""
    refused = shipped_refused_js_modules() if js_refused is None else js_refused
    return _javascript(code, language, refused)
