"""Mutation sites of a known-good solution in a C-like language (Go, JavaScript, TypeScript,
Java, Rust), found with its tree-sitter grammar (sim only).

The same small, plausible bugs as for Python, as text edits on the original: a flipped
comparison, `+` and `-` swapped, an off-by-one number, a negated `if`, a dropped statement.
Only code inside function bodies is touched, so every name the tests use survives; loops that
are not over a range (C-style `for`, `while`) are left alone, since a mutant of one may never
end and the test run would sit out its timeout.
"""

from __future__ import annotations

from harness.extract import syntax_tree, walk
from harness.sim.mutate import Site

__all__ = ["find_c_sites"]

_COMPARE_SWAP = {
    "<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "===": "!==",
    "!==": "===",
}  # fmt: skip
_ARITH_SWAP = {"+": "-", "-": "+"}
_NUMBERS = frozenset({"int_literal", "number", "integer_literal", "decimal_integer_literal"})
_STRINGS = ("string", "template_string", "interpreted_string_literal", "raw_string_literal")
_STATEMENTS = frozenset({"expression_statement", "inc_statement", "dec_statement"})
_STATEMENTS |= {"assignment_statement"}
_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "method_declaration",
        "func_literal",
        "function_item",
        "method_definition",
        "function_expression",
        "arrow_function",
        "constructor_declaration",
    }
)
_LOOPS = frozenset({"while_statement", "do_statement", "while_expression", "loop_expression"})
_RANGE_CLAUSES = frozenset({"range_clause"})


def find_c_sites(source: str, grammar: str) -> tuple[Site, ...]:
    """Every mutation site of `source`, in tree order; () if it does not parse."""
    tree = syntax_tree(source, grammar)
    if tree is None:
        return ()
    data = source.encode("utf-8")
    sites: list[Site] = []

    def add(kind: str, start: int, end: int, replacement: str) -> None:
        begin, stop = _chars(data, start), _chars(data, end)
        if source[begin:stop] != replacement:
            sites.append(Site(len(sites), kind, begin, stop, replacement))

    for node in walk(tree.root_node):
        if not _mutable(node):
            continue
        text = _text(node)
        if node.type == "binary_expression":
            _binary(node, add)
        elif node.type in _NUMBERS and text.isdigit():
            value = int(text)
            add(
                "off_by_one",
                node.start_byte,
                node.end_byte,
                str(value + 1 if value <= 1 else value - 1),
            )
        elif node.type == "if_statement" and (cond := node.child_by_field_name("condition")):
            inner = _text(cond)
            wrapped = f"(!{inner})" if cond.type == "parenthesized_expression" else f"!({inner})"
            add("negate_condition", cond.start_byte, cond.end_byte, wrapped)
        elif node.type in _STATEMENTS and _in_block(node):
            add("delete_statement", node.start_byte, node.end_byte, "")
    return tuple(sites)


def _binary(node, add) -> None:  # type: ignore[no-untyped-def]
    op = node.child_by_field_name("operator")
    if op is None:
        return
    symbol = _text(op)
    if symbol in _COMPARE_SWAP:
        add("flip_comparison", op.start_byte, op.end_byte, _COMPARE_SWAP[symbol])
    elif symbol in _ARITH_SWAP and not any(c.type in _STRINGS for c in node.named_children):
        add("swap_arithmetic", op.start_byte, op.end_byte, _ARITH_SWAP[symbol])


def _text(node) -> str:  # type: ignore[no-untyped-def]
    return bytes(node.text or b"").decode("utf-8", errors="replace")


def _chars(data: bytes, offset: int) -> int:
    """tree-sitter counts bytes; the edits index characters."""
    return len(data[:offset].decode("utf-8", errors="ignore"))


def _in_block(node) -> bool:  # type: ignore[no-untyped-def]
    parent = node.parent
    return parent is not None and parent.type in ("block", "statement_block", "statement_list")


def _mutable(node) -> bool:  # type: ignore[no-untyped-def]
    """Inside a function body and outside any loop that may not end."""
    in_function = False
    parent = node.parent
    while parent is not None:
        if parent.type in _LOOPS or (parent.type == "for_statement" and not _ranged(parent)):
            return False
        in_function |= parent.type in _FUNCTIONS
        parent = parent.parent
    return in_function


def _ranged(loop) -> bool:  # type: ignore[no-untyped-def]
    """`for _, x := range xs` and `for (const x of xs)` always end; `for i < n` may not."""
    return any(c.type in _RANGE_CLAUSES for c in loop.named_children)
