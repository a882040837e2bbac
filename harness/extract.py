"""Model reply → candidate code: fenced or raw, ast-checked, placeholders and gaps rejected."""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from harness._pyast import parse_module

__all__ = ["NO_CODE", "Extraction", "extract_code", "required_names_from_tests"]

NO_CODE = "no python code block found"

# Opening fence (``` or ~~~ with an optional info string), lazy body, then the same fence on
# its own line or the end of the reply: a reply cut off at max_tokens has no closing fence.
_FENCE = re.compile(
    r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`]*)[^\n`]*\n"
    r"(?P<body>.*?)(?:^[ \t]{0,3}(?P=fence)[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)
_PYTHON_LANGS = frozenset({"", "python", "py", "python3", "py3"})
# A line that can open a module; in an unfenced reply everything before it must read as prose.
_CODE_START = re.compile(
    r"^(from\s+[\w.]+\s+import\b|import\s+\w|(async\s+)?def\s+\w|class\s+\w|@\w|\"\"\"|'''|#!)"
)
_KEYWORD_START = re.compile(r"^(from|import|def|class|async|return|if|for|while|with|try|raise)\b")

# Comments that stand for code the model left out. Anchored and specific on purpose: a
# rejected candidate costs an attempt, so "# Other helpers" or "# REST client" must pass.
_PLACEHOLDER = re.compile(
    r"\brest\s+(of\s+(the\s+)?[\w.]+(\s+[\w.]+)?\s+)?((is|are)\s+)?(unchanged|the\s+same|as\s+before"
    r"|omitted|elided|not\s+shown|(remains|stays)\s+(unchanged|the\s+same))\b"
    r"|^\W*([\w:,]+\s+){0,3}(same|unchanged)\s+as\s+(before|above|earlier|previously"
    r"|(the\s+)?(original|previous)(\s+\w+)?)\W*$"
    r"|\b(omitted|elided|removed|truncated|skipped|shortened)\s+for\s+(brevity|space|clarity|length)\b"
    r"|^\W*(the\s+)?(existing|previous|original|unchanged)\s+(code|implementation|logic|methods?"
    r"|functions?|handlers?|helpers?|imports?|body|content)(\s+(here|goes\s+here|unchanged|as\s+before"
    r"|omitted|not\s+shown|(remains|stays)(\s+(unchanged|the\s+same))?))?\W*$"
    r"|^\W*(the\s+)?(other|remaining|more)\s+(code|implementation|logic|methods?|functions?|handlers?"
    r"|helpers?)\s+(here|goes\s+here|unchanged|as\s+before|omitted|not\s+shown"
    r"|(remain|stay)s?\s+(unchanged|the\s+same))\W*$"
    r"|\b(your|actual|real)\s+(code|implementation|logic)\s+(goes\s+)?here\b"
    r"|^\W*(implementation|code|logic)\s+goes\s+here\W*$"
    r"|^(\.\.\.|…)\W*$|^(\.\.\.|…)\s*[(\[]?\s*(rest|more|other|remaining|existing|same|unchanged|etc"
    r"|previous|original)\b|^\W*\[?snip(ped)?\]?\W*$",
    re.IGNORECASE,
)
# Only inside a stub body (pass / ... / raise NotImplementedError): elsewhere a TODO is a note.
_TODO = re.compile(
    r"\b(todo|fixme|implement|fill\s+(this\s+)?in|not\s+implemented)\b", re.IGNORECASE
)
_STUB_DECORATORS = frozenset({"overload", "abstractmethod", "abstractproperty"})
_STUB_BASES = frozenset({"Protocol", "ABC", "ABCMeta"})
_BLOCKS = (ast.Module, ast.stmt, ast.excepthandler, ast.match_case)
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, SystemError)


@dataclass(frozen=True)
class Extraction:
    """Code ready for the test runner, or the reason there is none."""

    code: str | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is not None


def extract_code(reply: str, required_names: Collection[str] = ()) -> Extraction:
    """Take the candidate module out of a model reply; never raises.

    Of several python blocks the pick is the one that parses, then defines most of the
    names the tests import, then is largest: models put the complete module in the largest
    block and use small ones for snippets, usage examples or the lines they changed.
    """
    required = frozenset(required_names)
    blocks = [_parse(text) for text in _candidate_texts(reply)]
    parsed = [(text, tree) for text, tree, _ in blocks if tree is not None]
    if not parsed:
        errors = sorted(blocks, key=lambda b: len(b[0]))
        return Extraction(None, errors[-1][2] if errors else NO_CODE)
    scored = [(code, tree, _missing(code, tree, required)) for code, tree in parsed]
    code, tree, missing = max(scored, key=lambda s: (-len(s[2]), len(s[0])))
    reason = _placeholder(code, tree) or _missing_reason(missing)
    return Extraction(None, reason) if reason else Extraction(code, None)


def required_names_from_tests(test_sources: Iterable[str], module_name: str) -> frozenset[str]:
    """The names the acceptance tests import from, or look up on, the candidate module."""
    names: set[str] = set()
    for source in test_sources:
        try:
            tree = parse_module(source)
        except _PARSE_ERRORS:
            continue  # an unparseable test file fails at collection; it requires nothing here
        aliases = _module_aliases(tree, module_name)
        for node in ast.walk(tree):
            names.update(_names_used(node, module_name, aliases))
    return frozenset(n for n in names if n != "*" and not (n.startswith("__") and n.endswith("__")))


def _candidate_texts(reply: str) -> list[str]:
    """Fenced python blocks; with no fence at all, the reply itself when it is code."""
    fences = list(_FENCE.finditer(reply))
    if fences:
        bodies = (m.group("body") for m in fences if m.group("lang").lower() in _PYTHON_LANGS)
        return [textwrap.dedent(body) for body in bodies if body.strip()]
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
    func = _dotted(node.func) or ""
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
        return [node.attr] if _dotted(node.value) in aliases else []
    if isinstance(node, ast.Call) and len(node.args) >= 2 and _dotted(node.args[0]) in aliases:
        func, name = _dotted(node.func) or "", node.args[1]
        # getattr(mod, "x") needs x; monkeypatch.setattr(mod, "x", v) does too unless raising=False
        needs = (func == "getattr" and len(node.args) == 2) or (
            func.endswith(".setattr") and not any(k.arg == "raising" for k in node.keywords)
        )
        if needs and isinstance(name, ast.Constant) and isinstance(name.value, str):
            return [name.value]
    return []


def _dotted(node: ast.AST) -> str | None:
    """The dotted text of a Name/Attribute chain, else None (a loop: chains can be long)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _placeholder(code: str, tree: ast.Module) -> str | None:
    """The first placeholder as a reason: a telltale comment or a lone `...` for omitted code.

    Cheap text checks come first: tokenizing and walking a module cost more than the rest of
    extraction, and most candidates have no suspicious comment and no `...` at all.
    """
    suspect = any(map(_suspicious, code.split("#")[1:]))
    if not suspect and "..." not in code:
        return None
    nodes = list(ast.walk(tree))
    found = _stray_ellipses(nodes) if "..." in code else []
    if suspect:
        stubs = _stub_lines(nodes)
        found += [(line, "") for line, text in _comments(code) if _suspicious(text, line in stubs)]
    if not found:
        return None
    line, context = min(found)
    lines = code.split("\n")
    text = lines[line - 1].strip() if 0 < line <= len(lines) else "..."
    snippet = text if len(text) <= 60 else text[:57] + "..."
    return f"placeholder at line {line}: {snippet!r}{context}"


def _suspicious(comment: str, in_stub: bool = True) -> bool:
    text = comment.split("\n", 1)[0].lstrip("#").strip()
    return bool(_PLACEHOLDER.search(text) or (in_stub and _TODO.search(text)))


def _comments(code: str) -> list[tuple[int, str]]:
    """(line, text) of every real comment; a '#' inside a string is not one."""
    out: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # the code parsed; keep the comments found before tokenize gave up
    return out


def _is_stub(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass) or _is_ellipsis(stmt):
        return True
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        return _dotted(exc) == "NotImplementedError"
    return False


def _statements(node: ast.AST, field: str) -> list[ast.stmt]:
    value = getattr(node, field, None)  # IfExp.body and Lambda.body are expressions
    return list(value) if isinstance(value, list) else []


def _body(node: ast.AST) -> list[ast.stmt]:
    """A block's statements without a leading docstring."""
    body = _statements(node, "body")
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:] if isinstance(body[0].value.value, str) else body
    return body


def _stub_lines(nodes: list[ast.AST]) -> set[int]:
    """Lines where a TODO comment means "not written": stub statements and stub functions."""
    lines: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.stmt) and _is_stub(node):
            lines.add(node.lineno)
        is_func = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        if is_func and all(_is_stub(s) for s in _body(node)):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _stray_ellipses(nodes: list[ast.AST]) -> list[tuple[int, str]]:
    """`...` standing for omitted code: beside other statements, or as the whole body of a
    function that is not a legitimate stub (Protocol/ABC member, @overload, @abstractmethod)."""
    found: list[tuple[int, str]] = []
    interface_methods = _interface_methods(nodes)
    for node in nodes:
        if not isinstance(node, _BLOCKS):
            continue
        for field in ("body", "orelse", "finalbody"):
            stmts = _body(node) if field == "body" else _statements(node, field)
            dots = [s for s in stmts if _is_ellipsis(s)]
            if dots and len(stmts) > 1:
                found.append((dots[0].lineno, ""))
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = _body(node)
        decorators = {_decorator_name(d) for d in node.decorator_list}
        legit = id(node) in interface_methods or decorators & _STUB_DECORATORS
        if len(body) == 1 and _is_ellipsis(body[0]) and not legit:
            found.append((body[0].lineno, f" (body of {node.name})"))
    return found


def _is_ellipsis(stmt: ast.stmt) -> bool:
    value = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(value, ast.Constant) and value.value is Ellipsis


def _decorator_name(node: ast.expr) -> str:
    return (_dotted(node.func if isinstance(node, ast.Call) else node) or "").split(".")[-1]


def _interface_methods(nodes: list[ast.AST]) -> set[int]:
    """ids of functions where a `...` body is the norm: members of Protocol/ABC classes and
    anything under `if TYPE_CHECKING:`."""
    owners: list[ast.AST] = []
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            bases = [_dotted(_unsubscript(b)) or "" for b in node.bases]
            bases += [_dotted(k.value) or "" for k in node.keywords if k.arg == "metaclass"]
            if any(b.split(".")[-1] in _STUB_BASES for b in bases):
                owners.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in (_dotted(node.test) or ""):
            owners.append(node)
    return {
        id(child)
        for owner in owners
        for child in ast.walk(owner)
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _unsubscript(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Subscript) else node  # Protocol[T] → Protocol
