"""Names the tests need from a candidate, and names a candidate defines, for Go and JavaScript.

Go: the exported identifiers the `_test.go` files call or build on the package (bare in a
same-package test, `pkg.Name` in an external `pkg_test` one). JavaScript and TypeScript: the
named imports (and `require` destructurings) of the candidate module. Languages without a
rule here require nothing: the test run is the check.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath

from harness.extract.tree import Node, parse_foreign, walk

__all__ = ["ANYTHING", "defined_names", "required_foreign_names"]

ANYTHING = "*"  # in defined names: the module may define anything (export *, module.exports)
_JS = ("javascript", "typescript", "tsx")
_GO_DECLS = {"type_declaration", "const_declaration", "var_declaration"}
_GO_SPECS = {"type_spec", "type_alias", "const_spec", "var_spec"}


def _text(node: Node | None) -> str:
    return bytes(node.text or b"").decode("utf-8", errors="replace") if node is not None else ""


def required_foreign_names(
    grammar: str, sources: Iterable[str], output: PurePath
) -> frozenset[str]:
    """What the tests import from, or call on, the candidate written at `output`."""
    names: set[str] = set()
    for source in sources:
        tree, _ = parse_foreign(source, grammar)
        if tree is None:
            continue  # a test that does not parse fails in the run; it requires nothing here
        if grammar == "go":
            names |= _go_required(tree.root_node, output)
        elif grammar in _JS:
            names |= _js_required(tree.root_node, output)
    return frozenset(names)


def defined_names(grammar: str, root: Node) -> frozenset[str]:
    """Top-level names the candidate defines (Go) or exports (JavaScript)."""
    if grammar == "go":
        return frozenset(_go_defined(root))
    if grammar in _JS:
        return frozenset(_js_exported(root))
    return frozenset({ANYTHING})


def _go_defined(root: Node) -> set[str]:
    names: set[str] = set()
    for decl in root.named_children:
        if decl.type == "function_declaration":
            names.add(_text(decl.child_by_field_name("name")))
            continue
        for spec in walk(decl) if decl.type in _GO_DECLS else ():
            near = spec.parent == decl or (spec.parent is not None and spec.parent.parent == decl)
            if spec.type in _GO_SPECS and near:
                names.update(_text(c) for c in spec.children_by_field_name("name"))
    return {n for n in names if n.isidentifier()}


def _go_required(root: Node, output: PurePath) -> set[str]:
    package = next((n for n in walk(root) if n.type == "package_identifier"), None)
    own = _text(package)
    aliases = {own.removesuffix("_test")} if own.endswith("_test") else set()
    for spec in (n for n in walk(root) if n.type == "import_spec"):
        path = _text(spec.child_by_field_name("path")).strip('"`')
        alias = _text(spec.child_by_field_name("name"))
        if path.rsplit("/", 1)[-1] == output.parent.name:
            aliases.add(alias or path.rsplit("/", 1)[-1])
    declared = _go_defined(root)
    needed: set[str] = set()
    for node in walk(root):
        if node.type == "selector_expression":
            operand = node.child_by_field_name("operand")
            if operand is not None and operand.type == "identifier" and _text(operand) in aliases:
                needed.add(_text(node.child_by_field_name("field")))
        elif not aliases and node.type in ("call_expression", "composite_literal"):
            head = node.child_by_field_name(
                "function" if node.type == "call_expression" else "type"
            )
            if head is not None and head.type in ("identifier", "type_identifier"):
                needed.add(_text(head))
        elif not aliases and node.type == "type_identifier" and _unqualified(node):
            needed.add(_text(node))
    return {n for n in needed if n[:1].isupper() and n not in declared}


def _unqualified(node: Node) -> bool:
    return node.parent is not None and node.parent.type != "qualified_type"


def _module_matches(specifier: str, output: PurePath) -> bool:
    """`./orders.mjs`, `../src/orders`, `./orders.js` for an output `src/orders.mjs`."""
    if not specifier.startswith("."):
        return False  # a package (`node:test`), never the candidate
    name = PurePath(specifier).name
    return name == output.name or name == output.stem or PurePath(name).stem == output.stem


def _js_required(root: Node, output: PurePath) -> set[str]:
    needed: set[str] = set()
    for node in walk(root):
        if node.type == "import_statement":
            if not _module_matches(_string(node.child_by_field_name("source")), output):
                continue
            for part in walk(node):
                if part.type == "import_specifier":
                    needed.add(_text(part.child_by_field_name("name")))
        elif node.type == "variable_declarator" and _is_require_of(node, output):
            pattern = node.child_by_field_name("name")
            if pattern is not None and pattern.type == "object_pattern":
                needed |= _pattern_keys(pattern)
    return {n for n in needed if n}


def _string(node: Node | None) -> str:
    return _text(node).strip("'\"`") if node is not None else ""


def _is_require_of(declarator: Node, output: PurePath) -> bool:
    value = declarator.child_by_field_name("value")
    if value is None or value.type != "call_expression":
        return False
    if _text(value.child_by_field_name("function")) != "require":
        return False
    args = [a for a in (value.child_by_field_name("arguments") or value).named_children]
    return bool(args) and _module_matches(_string(args[0]), output)


def _pattern_keys(pattern: Node) -> set[str]:
    keys = set()
    for child in pattern.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            keys.add(_text(child))
        elif child.type == "pair_pattern":
            keys.add(_text(child.child_by_field_name("key")))
    return keys


def _js_exported(root: Node) -> set[str]:
    names: set[str] = set()
    for node in walk(root):
        if node.type == "export_statement":
            names |= _exports_of(node)
        elif node.type == "member_expression" and _text(node.child_by_field_name("object")) in (
            "module",
            "exports",
        ):
            names.add(ANYTHING)  # CommonJS: what it exports is only known at run time
    return names


def _exports_of(statement: Node) -> set[str]:
    declaration = statement.child_by_field_name("declaration")
    if declaration is not None:
        named = [declaration.child_by_field_name("name")]
        named += [d.child_by_field_name("name") for d in declaration.named_children]
        return {_text(n) for n in named if n is not None and n.type.endswith("identifier")}
    if any(c.type == "default" for c in statement.children):
        return {"default"}
    if any(c.type == "*" for c in statement.children):
        return {ANYTHING}
    return {
        _text(s.child_by_field_name("alias") or s.child_by_field_name("name"))
        for s in walk(statement)
        if s.type == "export_specifier"
    }
