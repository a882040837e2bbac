"""Placeholders in model code: comments or bare `...` standing for code the model left out.

Precision matters more than recall here: a rejected candidate costs an attempt, so
legitimate stubs (Protocol and ABC methods, @overload, TYPE_CHECKING blocks, ellipsis
literals) and ordinary comments must pass.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from harness.pyast import dotted

__all__ = ["find_placeholder", "in_reference", "suspicious_comment"]

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
    r"|^\W*(the\s+)?rest\s+of\s+(the\s+)?[\w.]+(\s+[\w.]+)?\s+(goes\s+)?here\W*$"
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


def find_placeholder(code: str, tree: ast.Module, reference: str = "") -> str | None:
    """The first placeholder as a reason: a telltale comment or a lone `...` for omitted code.
    A line whose text the `reference` also has is never one: the port kept it.

    Cheap text checks come first: tokenizing and walking a module cost more than the rest of
    extraction, and most candidates have no suspicious comment and no `...` at all.
    """
    suspect = any(map(suspicious_comment, code.split("#")[1:]))
    if not suspect and "..." not in code:
        return None
    nodes = list(ast.walk(tree))
    found = _stray_ellipses(nodes) if "..." in code else []
    if suspect:
        stubs = _stub_lines(nodes)
        found += [
            (line, "") for line, text in _comments(code) if suspicious_comment(text, line in stubs)
        ]
    lines = code.split("\n")
    found = [f for f in found if not in_reference(lines[f[0] - 1] if f[0] else "", reference)]
    if not found:
        return None
    line, context = min(found)
    text = lines[line - 1].strip() if 0 < line <= len(lines) else "..."
    snippet = text if len(text) <= 60 else text[:57] + "..."
    return f"placeholder at line {line}: {snippet!r}{context}"


def suspicious_comment(comment: str, in_stub: bool = True) -> bool:
    """Whether a comment's text (any language's markers removed, or Python's `#`) stands for
    code left out; a TODO only counts `in_stub`, a body that is not written yet."""
    text = comment.split("\n", 1)[0].lstrip("#").strip()
    return bool(_PLACEHOLDER.search(text) or (in_stub and _TODO.search(text)))


_MARKERS = re.compile(r"#|//|/\*|--|;")
_EDGES = "#/*-;! \t"


def _words(text: str) -> str:
    """A line's text without comment markers at its ends and with its spaces collapsed."""
    return " ".join(text.strip().strip(_EDGES).split())


def in_reference(line: str, reference: str) -> bool:
    """Whether a line of the candidate is text the reference has too (whole, or as a
    comment in any language's markers), so it is the port's own and never a placeholder.
    A line of nothing but `...` or markers is no text: it is never excused."""
    if not reference:
        return False
    wanted = [w for w in (_words(line), _words(_MARKERS.split(line, 1)[-1])) if w.strip(".…")]
    if not wanted:
        return False
    for ref_line in reference.split("\n"):
        if any(w in (_words(ref_line), _words(_MARKERS.split(ref_line, 1)[-1])) for w in wanted):
            return True
    return False


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
        return dotted(exc) == "NotImplementedError"
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
    return (dotted(node.func if isinstance(node, ast.Call) else node) or "").split(".")[-1]


def _interface_methods(nodes: list[ast.AST]) -> set[int]:
    """ids of functions where a `...` body is the norm: members of Protocol/ABC classes and
    anything under `if TYPE_CHECKING:`."""
    owners: list[ast.AST] = []
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            bases = [dotted(_unsubscript(b)) or "" for b in node.bases]
            bases += [dotted(k.value) or "" for k in node.keywords if k.arg == "metaclass"]
            if any(b.split(".")[-1] in _STUB_BASES for b in bases):
                owners.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in (dotted(node.test) or ""):
            owners.append(node)
    return {
        id(child)
        for owner in owners
        for child in ast.walk(owner)
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _unsubscript(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Subscript) else node  # Protocol[T] → Protocol
