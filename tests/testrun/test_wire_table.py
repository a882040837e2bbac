"""The boundary's message keys and operations are named in one table (`wire.MESSAGE_KEYS`,
`wire.OPERATIONS`): every key and operation the boundary's code writes or reads is in it,
and every operation in it is one the code uses. Read from the source, so a new key or
operation added anywhere without its line in the table fails here."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.testrun.boundary import wire

BOUNDARY = Path(wire.__file__).parent
_MESSAGES = {"message", "reply", "fields"}  # the names a message dict goes by in the code
_OP_CALLS = {"request": 0, "invoke": 1, "_send": 1, "class_request": 1}


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is str else None


def _used() -> tuple[set[str], set[str]]:
    """(keys, operations) the boundary's modules write or read, from their syntax trees."""
    keys: set[str] = set()
    ops: set[str] = set()
    for path in sorted(BOUNDARY.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name, args = node.func.attr, node.args
                owner = node.func.value
                if name in ("get", "setdefault") and args and _text(args[0]):
                    if isinstance(owner, ast.Name) and owner.id in _MESSAGES:
                        keys.add(_text(args[0]))  # type: ignore[arg-type]
                    if isinstance(owner, ast.Attribute) and owner.attr == "outbox":
                        keys.add(_text(args[0]))  # type: ignore[arg-type]
                position = _OP_CALLS.get(name)
                if position is not None and len(args) > position and _text(args[position]):
                    ops.add(_text(args[position]))  # type: ignore[arg-type]
                if name == "request":
                    keys |= {k.arg for k in node.keywords if k.arg and k.arg != "fds"}
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id in _MESSAGES
                and _text(node.slice)
            ):
                keys.add(_text(node.slice))  # type: ignore[arg-type]
            if isinstance(node, ast.Dict):
                literal = {_text(k): v for k, v in zip(node.keys, node.values, strict=True) if k}
                op = _text(literal["q"]) if "q" in literal else None
                if op and op.isidentifier():  # (the table's own line for "q" is prose)
                    ops.add(op)
                spread = [v for k, v in zip(node.keys, node.values, strict=True) if k is None]
                grows = any(isinstance(v, ast.Name) and v.id in _MESSAGES for v in spread)
                if grows or "q" in literal or "a" in literal:  # {**message, "cb": ...}
                    keys |= {k for k in literal if k}
            if (
                isinstance(node, ast.Compare)
                and isinstance(node.left, ast.Name)
                and node.left.id == "op"
            ):
                for right in node.comparators:
                    found = [right] if _text(right) else getattr(right, "elts", [])
                    ops |= {_text(e) for e in found if _text(e)}  # type: ignore[misc]
    return keys, {op for op in ops if not op.startswith("__")}


def test_every_key_the_boundary_uses_is_in_the_table() -> None:
    """No message key is written or read that MESSAGE_KEYS does not name."""
    keys, _ = _used()

    assert keys and keys - set(wire.MESSAGE_KEYS) == set()


def test_every_operation_the_boundary_uses_is_in_the_table_and_back() -> None:
    """The operations asked and served are exactly OPERATIONS' (the `_OPS` table's too)."""
    _, ops = _used()

    assert ops | set(wire._OPS) == set(wire.OPERATIONS)


def test_the_table_reader_finds_a_key_added_without_its_line() -> None:
    """The reader sees keys in the shapes the code writes them: a key it would miss could
    never fail the test above."""
    sample = "def f(message, side):\n    reply = {'a': 1, 'zz': 2}\n    message.get('yy')\n"
    tree = ast.parse(sample)
    dicts = [n for n in ast.walk(tree) if isinstance(n, ast.Dict)]
    gets = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]

    assert {_text(k) for k in dicts[0].keys} == {"a", "zz"}
    assert _text(gets[0].args[0]) == "yy"
