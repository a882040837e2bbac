"""tree-sitter for the languages Python's `ast` cannot read: parse, syntax errors, placeholders.

Grammars come from tree-sitter-language-pack (pinned; every grammar ships in its wheel, none
is downloaded). A parser is made per call: tree-sitter parsers are not shared across threads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from harness.extract.placeholders import in_reference, suspicious_comment

__all__ = [
    "Node",
    "Tree",
    "comment_free",
    "find_foreign_placeholder",
    "parse_foreign",
    "syntax_tree",
    "walk",
]

Node = Any  # tree_sitter.Node: imported lazily, so `import harness.extract` stays light
Tree = Any

_MAX_DEPTH = 2000  # deeper than any real module; a walk never recurses anyway
_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "method_declaration",
        "func_literal",
        "function_definition",
        "function_item",
        "method_definition",
        "function_expression",
        "arrow_function",
        "generator_function_declaration",
        "constructor_declaration",
    }
)
_BODIES = frozenset({"block", "statement_block", "constructor_body"})
# A statement that stands for code not written: panic("TODO"), throw new Error("not
# implemented"), todo!(), unimplemented!(), throw new UnsupportedOperationException().
_STUB = re.compile(
    r"^\s*(panic\s*\(|throw\b|todo!|unimplemented!)"
    r".*(todo|fixme|not\s+(yet\s+)?implemented|implement\s+me|unsupportedoperation)",
    re.IGNORECASE | re.DOTALL,
)


def parse_foreign(code: str, grammar: str) -> tuple[Tree | None, str | None]:
    """(tree, None), or (None, 'syntax error at line N: ...') where the grammar found one."""
    from tree_sitter_language_pack import get_parser

    tree = get_parser(grammar).parse(code.encode("utf-8"))  # type: ignore[arg-type]
    root = tree.root_node
    if not root.has_error:
        return tree, None
    bad = next((n for n in walk(root) if n.is_error or n.is_missing), root)
    line = bad.start_point[0] + 1
    if bad.is_missing:
        return None, f"syntax error at line {line}: missing {bad.type!r}"
    text = _text(bad).strip().split("\n")[0]
    shown = text if len(text) <= 40 else text[:37] + "..."
    return None, f"syntax error at line {line}: unexpected {shown!r}"


def walk(root: Node) -> Iterator[Node]:
    """Every node under `root`, in source order, without recursion."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        yield node
        if depth < _MAX_DEPTH:
            stack.extend((child, depth + 1) for child in reversed(node.children))


def _text(node: Node) -> str:
    return bytes(node.text or b"").decode("utf-8", errors="replace")


def _comment_text(raw: str) -> str:
    """A comment without its markers: `// x`, `/* x */`, `# x`, ` * x` lines."""
    text = raw.strip()
    for opener in ("///", "//!", "//", "/**", "/*", "#"):
        if text.startswith(opener):
            text = text[len(opener) :]
            break
    text = text.removesuffix("*/")
    return " ".join(line.strip().lstrip("*").strip() for line in text.split("\n")).strip()


def _stub_lines(root: Node) -> set[int]:
    """Rows of functions whose body is empty or one stub statement (comments aside): there a
    TODO comment means "not written", elsewhere it is a note."""
    rows: set[int] = set()
    for node in walk(root):
        if node.type not in _FUNCTIONS:
            continue
        body = node.child_by_field_name("body")
        if body is None or body.type not in _BODIES:
            continue
        statements = [c for c in _statements(body) if "comment" not in c.type]
        if not statements or (len(statements) == 1 and _STUB.match(_text(statements[0]))):
            rows.update(range(node.start_point[0], node.end_point[0] + 1))
    return rows


def _statements(body: Node) -> list[Node]:
    children = [c for c in body.named_children]
    if len(children) == 1 and children[0].type == "statement_list":  # Go wraps them
        return list(children[0].named_children)
    return children


def find_foreign_placeholder(code: str, tree: Tree, reference: str = "") -> str | None:
    """The first placeholder as a reason: a telltale comment, a TODO in an unwritten body, or
    a body that is only `panic("not implemented")` and the like; never a line whose text the
    `reference` has too."""
    root = tree.root_node
    found: list[int] = []
    stubs = _stub_lines(root)
    for node in walk(root):
        row = node.start_point[0]
        if "comment" in node.type and suspicious_comment(_comment_text(_text(node)), row in stubs):
            found.append(row)
        elif node.type in _BODIES and node.parent is not None and node.parent.type in _FUNCTIONS:
            statements = [c for c in _statements(node) if "comment" not in c.type]
            if len(statements) == 1 and _STUB.match(_text(statements[0])):
                found.append(statements[0].start_point[0])
    lines = code.split("\n")
    found = [r for r in found if not in_reference(lines[r] if r < len(lines) else "", reference)]
    if not found:
        return None
    row = min(found)
    text = lines[row].strip() if row < len(lines) else "..."
    snippet = text if len(text) <= 60 else text[:57] + "..."
    return f"placeholder at line {row + 1}: {snippet!r}"


def comment_free(code: str, grammar: str) -> str:
    """`code` with every comment blanked out, lines kept (for regex checks that skip comments);
    the code unchanged when the grammar cannot parse it."""
    from tree_sitter_language_pack import get_parser

    data = bytearray(code.encode("utf-8"))
    tree = get_parser(grammar).parse(bytes(data))  # type: ignore[arg-type]
    for node in walk(tree.root_node):
        if "comment" in node.type:
            for i in range(node.start_byte, node.end_byte):
                if data[i] != ord("\n"):
                    data[i] = ord(" ")
    return data.decode("utf-8", errors="replace")


def syntax_tree(code: str, grammar: str) -> Tree | None:
    """The tree-sitter tree of `code`, or None when it has a syntax error."""
    tree, _ = parse_foreign(code, grammar)
    return tree
