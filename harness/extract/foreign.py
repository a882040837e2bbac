"""Reply → candidate code in a language other than Python: fenced or raw, parsed by its
tree-sitter grammar, placeholders refused, the names the tests need checked where known."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath

from harness.extract.fences import fenced_blocks
from harness.extract.languages import Language
from harness.extract.names import ANYTHING, defined_names, required_foreign_names
from harness.extract.tree import Tree, find_foreign_placeholder, parse_foreign

__all__ = ["extract_foreign", "no_code", "required_foreign"]

# A line that can open a module in a C-like language; prose before it is dropped.
_CODE_START = re.compile(
    r"^(package\s+\w|import\b|export\b|(async\s+)?function\b|class\s+\w|const\s|let\s|var\s|"
    r"use\s+[\w:]|fn\s+\w|pub(\(\w+\))?\s|mod\s+\w|public\s|interface\s|type\s+\w|/[/*]"
    r"|\"use strict)"
)
# Expressions a one-word reply parses to in a lenient grammar: `CLEAN`, `Done.`
_TRIVIAL = frozenset({"expression_statement", "comment", "ERROR"})


def no_code(language: Language) -> str:
    return f"no {language.fence} code block found"


def required_foreign(
    language: Language, sources: Iterable[str], output: PurePath
) -> frozenset[str]:
    """What the tests need the candidate to define; empty where the language has no rule."""
    if language.grammar is None:
        return frozenset()
    return required_foreign_names(language.grammar, sources, output)


def extract_foreign(
    reply: str, required: frozenset[str], language: Language, reference: str = ""
) -> tuple[str | None, str | None]:
    """(code, None) or (None, reason); of several blocks the one that parses, then defines
    most of what the tests need, then is largest."""
    grammar = language.grammar
    assert grammar is not None  # Python goes through ast
    blocks = [(text, *parse_foreign(text, grammar)) for text in _candidate_texts(reply, language)]
    parsed = [(text, tree) for text, tree, _ in blocks if tree is not None]
    if not parsed:
        errors = sorted(blocks, key=lambda b: len(b[0]))
        return None, errors[-1][2] if errors else no_code(language)
    scored = [(text, tree, _missing(grammar, tree, required)) for text, tree in parsed]
    code, tree, missing = max(scored, key=lambda s: (-len(s[2]), len(s[0])))
    reason = find_foreign_placeholder(code, tree, reference)
    if reason is None and missing:
        reason = f"missing names the tests use: {', '.join(missing)}"
    return (None, reason) if reason else (code, None)


def _missing(grammar: str, tree: Tree, required: frozenset[str]) -> list[str]:
    if not required:
        return []
    defined = defined_names(grammar, tree.root_node)
    return [] if ANYTHING in defined else sorted(required - defined)


def _candidate_texts(reply: str, language: Language) -> list[str]:
    """Blocks fenced for the language; with no fence at all, the reply when it is code."""
    fenced = fenced_blocks(reply, language.fences)
    if fenced is not None:
        return fenced
    text = reply.strip("\n")
    if _is_module(text, language):
        return [text]
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return []
    return ["\n".join(lines[start:])]  # "Here is the module:" then the code


def _is_module(text: str, language: Language) -> bool:
    """Whether a bare reply is code: it parses and declares something (a bare word parses
    as an expression in lenient grammars, and a review's `CLEAN` is no module)."""
    assert language.grammar is not None
    tree, _ = parse_foreign(text, language.grammar)
    if tree is None:
        return False
    return any(c.type not in _TRIVIAL for c in tree.root_node.named_children)
