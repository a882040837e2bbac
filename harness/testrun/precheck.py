"""Static pre-check: reject candidate code that reaches for the test machinery or the process.

A ported service module has no business importing pytest, walking frames, scanning /proc,
calling os._exit or patching builtins; code that does is rejected before it runs. The check
works on the AST, resolving import aliases and folding constant strings ("_" + "exit",
"".join([...]), f-strings, [::-1]) with the folder the guardrails use too (harness.pyast), so
simple obfuscation does not slip through. It is one layer: the sandbox and the recorder
still assume the code got past it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from harness.pyast import DYN, Folder, parse_module
from harness.pyast.scopes import Scopes

__all__ = ["precheck", "precheck_reasons"]

_MODULES = {
    "ctypes": "can rewrite the test runner's memory",
    "_ctypes": "can rewrite memory",
    "cffi": "can rewrite memory",
    "gc": "can reach the recorder's objects",
    "_pytest": "reaches into pytest's internals",
    "pytest": "reaches into pytest",
    "pluggy": "reaches into pytest's plugin system",
    "conftest": "reaches into test setup",
    "atexit": "runs code after the tests",
    "builtins": "can patch builtins",
    "__builtin__": "can patch builtins",
    "signal": "can disable the test timeouts",
    "marshal": "can forge code objects",
    "_harness_sandbox_recorder": "reaches the recorder",
    "_harness_sandbox_guard": "reaches the recorder",
    "harness": "reaches into the harness",
}
_ATTRS = {
    "sys": {
        "modules",
        "_getframe",
        "_current_frames",
        "settrace",
        "setprofile",
        "exit",
        "meta_path",
        "path_hooks",
        "excepthook",
        "executable",
        "addaudithook",
    },
    "os": {
        "_exit",
        "kill",
        "killpg",
        "fork",
        "forkpty",
        "setsid",
        "setpgid",
        "setpgrp",
        "abort",
        "write",
        "dup",
        "dup2",
        "closerange",
        "register_at_fork",
    },
    "inspect": {"currentframe", "stack", "getouterframes", "getinnerframes", "trace"},
    "importlib": {"reload"},
    "types": {"CodeType"},
}
# Attributes that expose frames, globals or code objects on any object.
_ANY_ATTRS = {
    "__subclasses__",
    "__globals__",
    "__code__",
    "__closure__",
    "__builtins__",
    "__import__",
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "tb_frame",
    "gi_frame",
    "cr_frame",
    "ag_frame",
}
_CALLS = {"exec", "eval", "compile", "__import__", "exit", "quit", "breakpoint"}
_DYNAMIC = {"getattr", "setattr", "delattr", "hasattr", "import_module", "find_spec"}
_RAISES = {"SystemExit", "KeyboardInterrupt", "GeneratorExit"}
_WORDS = ("conftest", "_pytest", "site-packages")
_PATHS = ("/proc", "/dev/fd")
_NAMES = _ANY_ATTRS | {a for attrs in _ATTRS.values() for a in attrs if a.startswith("_")}


class _Checker(ast.NodeVisitor):
    def __init__(self, folder: Folder, scopes: Scopes) -> None:
        self.folder = folder
        self.scopes = scopes
        self.reasons: list[tuple[int, str]] = []

    def flag(self, node: ast.AST, reason: str) -> None:
        self.reasons.append((getattr(node, "lineno", 0), reason))

    def _module(self, node: ast.AST, name: str) -> None:
        top = name.split(".")[0]
        if top in _MODULES:
            self.flag(node, f"imports {name} ({_MODULES[top]})")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._module(node, module)
        for alias in node.names:
            self._attribute(node, f"{module}.{alias.name}")

    def _attribute(self, node: ast.AST, qualname: str) -> None:
        parts = qualname.split(".")
        if parts[-1] in _ANY_ATTRS:
            self.flag(node, f"uses {parts[-1]} (reaches frames, globals or code objects)")
        elif len(parts) >= 2 and parts[-1] in _ATTRS.get(parts[-2], ()):
            self.flag(node, f"uses {parts[-2]}.{parts[-1]} (reaches the process or the runner)")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.folder.qualname(node)
        self._attribute(node, name if name is not None else f"?.{node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__builtins__", "__import__"):
            self.flag(node, f"uses {node.id} (can patch builtins)")

    def visit_Call(self, node: ast.Call) -> None:
        name = self.folder.qualname(node.func) or ""
        short = name.split(".")[-1]
        if name in _CALLS:
            self.flag(node, f"calls {name}() (runs or ends code outside the checked text)")
        elif short in _DYNAMIC and node.args:
            self._dynamic(node, short)
        self._strings(node)
        self.generic_visit(node)

    def _dynamic(self, node: ast.Call, short: str) -> None:
        if short in ("import_module", "find_spec"):
            targets = self.folder.strings(node.args[0])
            if any(DYN in target for target in targets):
                self.flag(node, f"{short} with a computed module name")
            for target in (t for t in targets if DYN not in t):
                self._module(node, target)
            return
        if len(node.args) < 2:
            return
        owner = self.folder.qualname(node.args[0]) or "?"
        names = self.folder.strings(node.args[1])
        if any(DYN in name for name in names) and owner.split(".")[0] in {*_ATTRS, *_MODULES}:
            self.flag(node, f"{short}() with a computed name on {owner}")
        for name in (n for n in names if DYN not in n):
            self._attribute(node, f"{owner}.{name}")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._rewires(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._rewires(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._rewires(target)
        self.generic_visit(node)

    def _rewires(self, target: ast.expr) -> None:
        """An attribute of an imported module or of what it exports (unittest.TestCase's
        assertEqual, Fraction.__eq__) rebound: the tests may rely on that library. Only a
        name that certainly is an import counts: a parameter called `node` is not `node.py`."""
        root = target
        while isinstance(root, ast.Attribute):
            root = root.value
        imported = isinstance(root, ast.Name) and self.scopes.imported(root)
        if isinstance(target, ast.Attribute) and imported:
            name = self.folder.qualname(target)
            self.flag(target, f"rebinds {name} (patches a library the tests may use)")

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(exc, ast.Name) and exc.id in _RAISES:
            self.flag(node, f"raises {exc.id} (ends the test session)")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        for key in self.folder.strings(node.slice):
            if key in _NAMES:
                self.flag(node, f"looks up {key!r} dynamically")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        self._strings(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._strings(node)
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._strings(node)
        self.generic_visit(node)

    def _strings(self, node: ast.expr) -> None:
        """Flag what `node` may evaluate to; a known part of a partly known string counts."""
        for text in self.folder.strings(node):
            hit = next((s for s in _WORDS if s in text), None)
            hit = hit or next((p for p in _PATHS if f"{p}/" in text or text.rstrip("/") == p), None)
            if hit:
                self.flag(node, f"mentions {hit!r} (test runner or process internals)")


def _walk_reasons(tree: ast.Module) -> Iterator[str]:
    checker = _Checker(Folder(tree), Scopes(tree))
    checker.visit(tree)
    seen: set[str] = set()
    for line, reason in sorted(checker.reasons):
        if reason not in seen:
            seen.add(reason)
            yield f"line {line}: {reason}"


def precheck_reasons(code: str) -> list[str]:
    """Every reason to reject `code`; code that does not parse is left to the test run."""
    try:
        tree = parse_module(code)
    except (SyntaxError, ValueError):
        return []
    return list(_walk_reasons(tree))


def precheck(code: str) -> str | None:
    """Why `code` must not run (the first few reasons), or None when it may."""
    reasons = precheck_reasons(code)
    if not reasons:
        return None
    more = f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else ""
    return "; ".join(reasons[:3]) + more
