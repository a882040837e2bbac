"""What the stand-in of a JavaScript candidate must export, read from the code without running
it: a guess that lets the tests' launch start beside the first candidate process instead of
after it. The candidate process's own answer (`describe`) checks the guess after the run; a
wrong guess means the run is made again from the answer (jsrun), so the guess is a speed-up,
never what the verdict rests on.

- format: `.mjs`/`.mts` ESM, `.cjs`/`.cts` CommonJS, else the `type` of the nearest
  package.json in the tree (node's own rule, without its syntax detection);
- ESM names: the top-level `export` statements (`export * from` cannot be read: no guess);
- CommonJS names: `exports.x =`, `module.exports.x =` and `module.exports = { a, b: ... }`,
  what node's own reader of CommonJS export names (cjs-module-lexer) finds in most modules.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

from harness.extract import syntax_tree

__all__ = ["guess_exports", "module_format"]

_CJS_PROPERTY = re.compile(r"(?<![\w$.])(?:module\s*\.\s*)?exports\s*\.\s*([A-Za-z_$][\w$]*)\s*=")
_CJS_OBJECT = re.compile(r"(?<![\w$.])module\s*\.\s*exports\s*=\s*\{")
_KEY = re.compile(r"^\s*(?:\.\.\.)?\s*([A-Za-z_$][\w$]*)\s*(?::|$|\()")


def module_format(rel: str, files: dict[str, bytes]) -> str:
    """ "esm" or "cjs": how node loads the file at `rel` in a tree holding `files`."""
    suffix = PurePosixPath(rel).suffix
    if suffix in (".mjs", ".mts"):
        return "esm"
    if suffix in (".cjs", ".cts"):
        return "cjs"
    for folder in PurePosixPath(rel).parents:
        manifest = files.get((folder / "package.json").as_posix().removeprefix("./"))
        if manifest is not None:
            try:
                data = json.loads(manifest)
            except ValueError:
                return "cjs"
            return "esm" if isinstance(data, dict) and data.get("type") == "module" else "cjs"
    return "cjs"


def guess_exports(code: str, fmt: str, language: str) -> list[str] | None:
    """The module's export names, or None when they cannot be read from the code."""
    if fmt == "cjs":
        names = _CJS_PROPERTY.findall(code)
        for start in _CJS_OBJECT.finditer(code):
            for item in _top_level_items(code, start.end()):
                found = _KEY.match(item)
                if found:
                    names.append(found.group(1))
        return sorted(set(names))
    tree = syntax_tree(code, language)
    if tree is None:
        return None
    names: list[str] = []
    for node in tree.root_node.children:
        if node.type != "export_statement":
            continue
        found = _esm_names(node)
        if found is None:
            return None
        names.extend(found)
    return sorted(set(names))


def _top_level_items(code: str, at: int) -> list[str]:
    """The comma-separated items of the object literal whose body starts at `at`."""
    items, depth, start = [], 0, at
    for i in range(at, len(code)):
        char = code[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                items.append(code[start:i])
                break
            depth -= 1
        elif char == "," and depth == 0:
            items.append(code[start:i])
            start = i + 1
    return items


def _text(node) -> str:
    text = (node.text or b"").decode("utf-8", errors="replace")
    return json.loads(text) if node.type == "string" and text[:1] == '"' else text.strip("'\"")


def _esm_names(node) -> list[str] | None:
    kinds = [c.type for c in node.children]
    if "default" in kinds:
        return ["default"]
    declaration = node.child_by_field_name("declaration")
    if declaration is not None:
        return _declared(declaration)
    names: list[str] = []
    for child in node.children:
        if child.type == "export_clause":
            for spec in child.named_children:
                alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                if alias is not None:
                    names.append(_text(alias))
        elif child.type == "namespace_export":
            named = [c for c in child.named_children]
            if named:
                names.append(_text(named[-1]))
    if not names and "*" in kinds:
        return None  # export * from '...': the names are another module's
    return names


def _declared(declaration) -> list[str] | None:
    if declaration.type in ("interface_declaration", "type_alias_declaration"):
        return []  # types only: nothing at run time
    if declaration.type in ("lexical_declaration", "variable_declaration"):
        names = []
        for declarator in declaration.named_children:
            name = declarator.child_by_field_name("name")
            if name is None or name.type != "identifier":
                return None  # a destructuring pattern
            names.append(_text(name))
        return names
    name = declaration.child_by_field_name("name")
    return [_text(name)] if name is not None else None
