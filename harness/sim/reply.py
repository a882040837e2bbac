"""How the simulator's replies read: code wrapped the ways real models wrap it (prose, fences,
none), damaged the ways they damage it (a line cut off, a body elided, output truncated),
and reviews that say CLEAN, list violations, or ramble."""

from __future__ import annotations

import ast
import difflib
import random
import re
from dataclasses import dataclass

from harness.extract import syntax_tree, walk
from harness.llm import StopReason
from harness.pyast import parse_module


@dataclass(frozen=True)
class Dialect:
    """The language a task's replies are in: its fence, and its tree-sitter grammar (None:
    Python, read with ast)."""

    fence: str = "python"
    grammar: str | None = None
    fences: tuple[str, ...] = ("python", "py", "python3", "py3")  # any a prompt may use


PYTHON = Dialect()

__all__ = [
    "PYTHON",
    "RAMBLE",
    "UNUSABLE",
    "WRAP_WEIGHTS",
    "Dialect",
    "break_syntax",
    "edits",
    "elide_body",
    "fence",
    "review",
    "wrap",
]

# Reply shapes, as weights: how real models wrap the code they return.
WRAP_WEIGHTS = {
    "prose_fence_prose": 54,
    "prose_fence": 18,
    "bare_fence": 7,
    "fence_only": 5,
    "raw": 8,
    "syntax_error": 3,  # a line cut off mid-way
    "truncated": 3,  # stops mid-code with stop reason max_tokens
    "placeholder": 2,  # one function body replaced by a "same as before" comment
}
REVIEW_RAMBLE = 0.03  # a review that is neither CLEAN nor a list

_INTROS = (
    "Here is the complete module.",
    "Here's the updated file:",
    "Below is the full ported service.",
    "I fixed the failing cases; the whole file follows.",
)
_OUTROS = (
    "Public names and signatures are unchanged.",
    "Let me know if anything else fails.",
    "The change is limited to the failing paths.",
)
# A function definition: Python's def, Go's func (methods too), JavaScript's function, Rust's fn.
_DEFINITION = (
    r"^\s*(?:export\s+)?(?:pub\s+)?(?:async\s+)?(?:def|func|function|fn)\s+(?:\([^)]*\)\s*)?"
    r"([A-Za-z]\w*)"
)
_PLACEHOLDERS = ("# ... rest unchanged", "# existing code here", "# ... (same as before)")
_VIOLATIONS = (
    "{name} logs with print() instead of the platform logger",
    "{name} returns a legacy status tuple instead of the platform's type",
    "{name} raises a bare Exception instead of a platform error",
    "{name} keeps module-level mutable state",
    "{name} imports a legacy helper instead of a platform capability",
)
RAMBLE = (
    "Looking through the module, the overall structure seems mostly reasonable, although a "
    "few of the functions could perhaps be organised differently. I would double-check the "
    "error paths before shipping."
)


def fence(code: str, dialect: Dialect = PYTHON) -> str:
    return f"```{dialect.fence}\n{code.rstrip()}\n```"


UNUSABLE = ("syntax_error", "truncated", "placeholder")


def wrap(
    rng: random.Random,
    code: str,
    unusable_factor: float = 1.0,
    dialect: Dialect = PYTHON,
    unusable: float = 0.08,
) -> tuple[str, StopReason]:
    """`code` in a reply shape drawn from WRAP_WEIGHTS; the unusable shapes share `unusable`
    of the replies at factor 1 (0.08: WRAP_WEIGHTS as written) and their weights are scaled
    by `unusable_factor` (a weaker tier damages more replies)."""
    bad = sum(w for s, w in WRAP_WEIGHTS.items() if s in UNUSABLE)
    good = sum(WRAP_WEIGHTS.values()) - bad
    scale = unusable_factor * (unusable / (1 - unusable)) * good / bad
    weights = [w * (scale if s in UNUSABLE else 1) for s, w in WRAP_WEIGHTS.items()]
    shape = rng.choices(list(WRAP_WEIGHTS), weights=weights)[0]
    intro, outro = rng.choice(_INTROS), rng.choice(_OUTROS)
    if shape == "raw":
        return code, StopReason.END
    if shape == "truncated":
        return f"{intro}\n\n```{dialect.fence}\n{code[: int(len(code) * rng.uniform(0.3, 0.9))]}", (
            StopReason.MAX_TOKENS
        )
    if shape == "syntax_error":
        code = break_syntax(rng, code, dialect)
    elif shape == "placeholder":
        code = elide_body(rng, code, rng.choice(_PLACEHOLDERS), dialect)
    block = fence(code, dialect)
    if shape == "bare_fence":
        block = block.replace(f"```{dialect.fence}", "```", 1)
    if shape == "fence_only":
        return block, StopReason.END
    after = "" if shape == "prose_fence" else f"\n\n{outro}"
    return f"{intro}\n\n{block}{after}", StopReason.END


def review(rng: random.Random, code: str, lists: bool, ramble: float = REVIEW_RAMBLE) -> str:
    """CLEAN, or "- " violation lines naming the module's functions; with chance `ramble`
    neither (sim_model.yaml reply.review_ramble)."""
    if rng.random() < ramble:
        return RAMBLE
    names = re.findall(_DEFINITION, code, re.MULTILINE)
    if not lists or not names:
        return "CLEAN"
    picks = [
        rng.choice(_VIOLATIONS).format(name=rng.choice(names)) for _ in range(rng.randint(1, 3))
    ]
    return "\n".join(f"- {pick}" for pick in dict.fromkeys(picks))


def break_syntax(rng: random.Random, code: str, dialect: Dialect = PYTHON) -> str:
    """Cut one line off two thirds of the way, as a model that lost its place does."""
    lines = code.split("\n")
    candidates = [i for i, line in enumerate(lines) if len(line.strip()) >= 12]
    rng.shuffle(candidates)
    for i in candidates[:8]:
        broken = "\n".join([*lines[:i], lines[i][: len(lines[i]) * 2 // 3], *lines[i + 1 :]])
        if not _parses(broken, dialect):
            return broken
    return code.rstrip() + "\nresult = (\n"  # an unclosed bracket never parses


def elide_body(rng: random.Random, code: str, comment: str, dialect: Dialect = PYTHON) -> str:
    """One function's body replaced by `comment` and `...` (or `pass  # TODO implement`),
    as models do to save output."""
    if dialect.grammar is not None:
        return _elide_c(rng, code, "//" + comment.removeprefix("#"), dialect.grammar)
    try:
        tree = parse_module(code)
    except (SyntaxError, ValueError, RecursionError, SystemError):
        return f"{code.rstrip()}\n\n{comment}\n"
    funcs = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and len(node.body) >= 2
        and node.body[1].lineno > node.lineno
    ]
    if not funcs:
        return f"{code.rstrip()}\n\n{comment}\n"
    func = rng.choice(funcs)
    first = func.body[1] if isinstance(func.body[0], ast.Expr) else func.body[0]
    lines = code.split("\n")
    indent = lines[first.lineno - 1][: first.col_offset]
    stub = [indent + comment, indent + "..."]
    if rng.random() < 0.3:
        stub = [indent + "pass  # TODO implement"]
    return "\n".join([*lines[: first.lineno - 1], *stub, *lines[func.end_lineno or 0 :]])


def _elide_c(rng: random.Random, code: str, comment: str, grammar: str) -> str:
    """A C-like function's statements replaced by `comment` (braces kept)."""
    tree = syntax_tree(code, grammar)
    bodies = []
    for node in walk(tree.root_node) if tree is not None else ():
        body = node.child_by_field_name("body") if "function" in node.type else None
        statements = _statements(body) if body is not None else []
        if len(statements) >= 2:
            bodies.append(statements)
    if not bodies:
        return f"{code.rstrip()}\n\n{comment}\n"
    statements = rng.choice(bodies)
    data = code.encode("utf-8")
    start, end = statements[0].start_byte, statements[-1].end_byte
    return (data[:start] + comment.encode("utf-8") + data[end:]).decode("utf-8")


def _statements(body: object) -> list:
    children = list(getattr(body, "named_children", []))
    if len(children) == 1 and children[0].type == "statement_list":
        children = list(children[0].named_children)
    return children


def _parses(code: str, dialect: Dialect = PYTHON) -> bool:
    if dialect.grammar is not None:
        return syntax_tree(code, dialect.grammar) is not None
    try:
        parse_module(code)
    except (SyntaxError, ValueError, RecursionError, SystemError):
        return False
    return True


_EDIT_INTROS = (
    "Here are the changes:",
    "The fix, as edits to the current file:",
    "Two spots needed changing.",
    "I changed only the failing paths:",
)
_WHOLE_SHARE = 0.5  # a fix rewriting more than this share of lines answers with the file


def edits(
    rng: random.Random, base: str, code: str, malformed: float, dialect: Dialect = PYTHON
) -> tuple[str, StopReason] | None:
    """`code` as SEARCH/REPLACE blocks against `base` (what the fix prompt showed), or None
    when a whole file is the better answer (nothing changed, or most of it). With chance
    `malformed` one block's SEARCH text is off by its indentation, as a model copying a line
    from memory makes it: the strict apply then refuses the reply. Draws in a fixed order."""
    bad, pick, intro = rng.random() < malformed, rng.random(), rng.choice(_EDIT_INTROS)
    old, new = base.rstrip("\n").split("\n"), code.rstrip("\n").split("\n")
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(1))
    changed = sum(
        max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"
    )
    if not groups or changed > _WHOLE_SHARE * len(old):
        return None
    blocks = []
    for group in groups:
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        while _count(old, old[i1:i2]) != 1 and (i1 > 0 or i2 < len(old)):  # make it unique
            if i1 > 0:
                i1, j1 = i1 - 1, j1 - 1
            if i2 < len(old):
                i2, j2 = i2 + 1, j2 + 1
        blocks.append([old[i1:i2], new[j1:j2]])
    if bad:
        search = blocks[int(pick * len(blocks))][0]
        k = next((n for n, line in enumerate(search) if line.strip()), 0)
        search[k] = " " + search[k]  # one space more of indentation than the file has
    text = "\n\n".join(
        "\n".join(["<<<<<<< SEARCH", *s, "=======", *r, ">>>>>>> REPLACE"]) for s, r in blocks
    )
    return f"{intro}\n\n{text}", StopReason.END


def _count(lines: list[str], part: list[str]) -> int:
    """Where `part` occurs in `lines` as whole lines (an empty part never applies: 2)."""
    if not part or not "".join(part).strip():
        return 2
    k = len(part)
    return sum(lines[i : i + k] == part for i in range(len(lines) - k + 1))
