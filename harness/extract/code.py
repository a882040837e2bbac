"""Model reply → candidate code: fenced or raw, syntax-checked (ast for Python, tree-sitter
for the rest), placeholders and gaps rejected."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import PurePath

from harness.extract.fences import fenced_blocks
from harness.extract.foreign import extract_foreign, required_foreign
from harness.extract.languages import LANGUAGES, language_named
from harness.extract.placeholders import find_placeholder
from harness.pyast import dotted, parse_module

__all__ = ["NO_CODE", "Extraction", "extract_code", "required_names_from_tests"]

NO_CODE = "no python code block found"

_PYTHON_LANGS = LANGUAGES["python"].fences
# A line that can open a module; in an unfenced reply everything before it must read as prose.
_CODE_START = re.compile(
    r"^(from\s+[\w.]+\s+import\b|import\s+\w|(async\s+)?def\s+\w|class\s+\w|@\w|\"\"\"|'''|#!)"
)
_KEYWORD_START = re.compile(r"^(from|import|def|class|async|return|if|for|while|with|try|raise)\b")

_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, SystemError)


@dataclass(frozen=True)
class Extraction:
    """Code ready for the test runner, or the reason there is none."""

    code: str | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is not None


def extract_code(
    reply: str, required_names: Collection[str] = (), language: str = "python", reference: str = ""
) -> Extraction:
    """Take the candidate module in `language` out of a model reply; never raises. Text the
    `reference` (the task's reference sources) also has is never taken for a placeholder.

    Of several python blocks the pick is the one that parses, then defines most of the
    names the tests import, then is largest: models put the complete module in the largest
    block and use small ones for snippets, usage examples or the lines they changed.
    """
    required = frozenset(required_names)
    lang = language_named(language)
    try:
        reply.encode("utf-8")
    except UnicodeEncodeError as exc:  # no source file can hold it, nor any parser read it
        return Extraction(None, f"the reply is not valid Unicode: {exc.reason} at {exc.start}")
    if not lang.is_python:
        return Extraction(*extract_foreign(reply, required, lang, reference))
    blocks = [_parse(text) for text in _candidate_texts(reply)]
    parsed = [(text, tree) for text, tree, _ in blocks if tree is not None]
    if not parsed:
        errors = sorted(blocks, key=lambda b: len(b[0]))
        return Extraction(None, errors[-1][2] if errors else NO_CODE)
    scored = [(code, tree, _missing(code, tree, required)) for code, tree in parsed]
    code, tree, missing = max(scored, key=lambda s: (-len(s[2]), len(s[0])))
    reason = find_placeholder(code, tree, reference) or _missing_reason(missing)
    return Extraction(None, reason) if reason else Extraction(code, None)


def required_names_from_tests(
    test_sources: Iterable[str],
    module_name: str,
    language: str = "python",
    output: PurePath | None = None,
) -> frozenset[str]:
    """The names the acceptance tests import from, or look up on, the candidate module
    (`output`: its path relative to the tests' root, which Go and JavaScript need)."""
    lang = language_named(language)
    if not lang.is_python:
        return required_foreign(lang, test_sources, output or PurePath(module_name + lang.suffix))
    names: frozenset[str] = frozenset()
    for source in test_sources:
        names |= _required_in(source, module_name)
    return frozenset(n for n in names if n != "*" and not (n.startswith("__") and n.endswith("__")))


@functools.lru_cache(maxsize=128)
def _required_in(source: str, module_name: str) -> frozenset[str]:
    """The names one test file uses from the module; once per text (every night and every
    attempt's first step read the same tests again)."""
    try:
        tree = parse_module(source)
    except _PARSE_ERRORS:
        return frozenset()  # an unparseable test file fails at collection; requires nothing
    aliases = _module_aliases(tree, module_name)
    names: set[str] = set()
    for node in ast.walk(tree):
        names.update(_names_used(node, module_name, aliases))
    return frozenset(names)


def _candidate_texts(reply: str) -> list[str]:
    """Fenced python blocks; with no fence at all, the reply itself when it is code."""
    fenced = fenced_blocks(reply, _PYTHON_LANGS)
    if fenced is not None:
        return fenced
    text = reply.strip("\n")
    _, tree, _ = _parse(text)
    if tree is not None:  # a bare word (`CLEAN`) parses too; a module does more than that
        return [text] if any(not isinstance(s, ast.Expr) for s in tree.body) else []
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return []
    head = [line for line in lines[:start] if line.strip()]
    if all(_is_prose(line) for line in head):  # "Here is the module:" then the code
        return ["\n".join(lines[start:])]
    return [text]


def _is_prose(line: str) -> bool:
    return not line[:1].isspace() and not _KEYWORD_START.match(line) and " " in line.strip()


def _parse(code: str) -> tuple[str, ast.Module | None, str | None]:
    try:
        return code, parse_module(code), None
    except SyntaxError as exc:
        message = (exc.msg or "invalid syntax").split("\n")[0]
        return code, None, f"syntax error at line {exc.lineno or 0}: {message}"
    except (ValueError, RecursionError, MemoryError, SystemError) as exc:
        return code, None, f"syntax error: {(str(exc) or type(exc).__name__).splitlines()[0]}"


def _missing(code: str, tree: ast.Module, required: frozenset[str]) -> list[str]:
    if not required:
        return []
    names, anything = _defined_names(code, tree)
    return [] if anything else sorted(required - names)


def _missing_reason(missing: list[str]) -> str | None:
    return f"missing names the tests import: {', '.join(missing)}" if missing else None


def _defined_names(code: str, tree: ast.Module) -> tuple[set[str], bool]:
    """Module-level names, and whether the module could define anything (star import,
    module `__getattr__`), in which case nothing is reported missing."""
    names: set[str] = set()
    if "global" in code:  # a full walk costs more than the rest; most modules have none
        names = {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}
    anything = False
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            anything |= node.name == "__getattr__"
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                anything |= alias.name == "*"
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif not isinstance(node, ast.Lambda | ast.comprehension):
            if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
                names.add(node.name)  # (an `except ... as e` name is unbound after the block)
            pending.extend(ast.iter_child_nodes(node))
    return names, anything


def _matches(dotted: str, module_name: str) -> bool:
    return dotted == module_name or dotted.endswith("." + module_name)


def _module_aliases(tree: ast.Module, module_name: str) -> set[str]:
    """Dotted names the candidate module is bound to in the tests (`svc`, `out.orders_service`)."""
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if _matches(a.name, module_name))
        elif isinstance(node, ast.ImportFrom):
            aliases.update(a.asname or a.name for a in node.names if a.name == module_name)
        elif isinstance(node, ast.Assign) and _is_dynamic_import(node.value, module_name):
            aliases.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return aliases


def _is_dynamic_import(node: ast.expr, module_name: str) -> bool:
    """`importlib.import_module("orders_service")` or `pytest.importorskip(...)`."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = dotted(node.func) or ""
    first = node.args[0]
    return (
        func.split(".")[-1] in ("import_module", "importorskip")
        and isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and _matches(first.value, module_name)
    )


def _names_used(node: ast.AST, module_name: str, aliases: set[str]) -> list[str]:
    if isinstance(node, ast.ImportFrom) and _matches(node.module or "", module_name):
        return [a.name for a in node.names]
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        return [node.attr] if dotted(node.value) in aliases else []
    if isinstance(node, ast.Call) and len(node.args) >= 2 and dotted(node.args[0]) in aliases:
        func, name = dotted(node.func) or "", node.args[1]
        # getattr(mod, "x") needs x; monkeypatch.setattr(mod, "x", v) does too unless raising=False
        needs = (func == "getattr" and len(node.args) == 2) or (
            func.endswith(".setattr") and not any(k.arg == "raising" for k in node.keywords)
        )
        if needs and isinstance(name, ast.Constant) and isinstance(name.value, str):
            return [name.value]
    return []
