"""How the simulator's replies read: code wrapped the ways real models wrap it (prose, fences,
none), damaged the ways they damage it (a line cut off, a body elided, output truncated),
and reviews that say CLEAN, list violations, or ramble."""

from __future__ import annotations

import ast
import random
import re

from harness.providers.base import StopReason
from harness.pyast import parse_module

__all__ = [
    "RAMBLE",
    "UNUSABLE",
    "WRAP_WEIGHTS",
    "break_syntax",
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


def fence(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


UNUSABLE = ("syntax_error", "truncated", "placeholder")


def wrap(rng: random.Random, code: str, unusable_factor: float = 1.0) -> tuple[str, StopReason]:
    """`code` in a reply shape drawn from WRAP_WEIGHTS; the unusable shapes' weights are
    scaled by `unusable_factor` (a weaker tier damages more replies)."""
    weights = [w * (unusable_factor if s in UNUSABLE else 1) for s, w in WRAP_WEIGHTS.items()]
    shape = rng.choices(list(WRAP_WEIGHTS), weights=weights)[0]
    intro, outro = rng.choice(_INTROS), rng.choice(_OUTROS)
    if shape == "raw":
        return code, StopReason.END
    if shape == "truncated":
        return f"{intro}\n\n```python\n{code[: int(len(code) * rng.uniform(0.3, 0.9))]}", (
            StopReason.MAX_TOKENS
        )
    if shape == "syntax_error":
        code = break_syntax(rng, code)
    elif shape == "placeholder":
        code = elide_body(rng, code, rng.choice(_PLACEHOLDERS))
    block = fence(code).replace("```python", "```", 1) if shape == "bare_fence" else fence(code)
    if shape == "fence_only":
        return block, StopReason.END
    after = "" if shape == "prose_fence" else f"\n\n{outro}"
    return f"{intro}\n\n{block}{after}", StopReason.END


def review(rng: random.Random, code: str, lists: bool) -> str:
    """CLEAN, or "- " violation lines naming the module's functions; rarely a ramble."""
    if rng.random() < REVIEW_RAMBLE:
        return RAMBLE
    names = re.findall(r"^\s*(?:async\s+)?def\s+([A-Za-z]\w*)", code, re.MULTILINE)
    if not lists or not names:
        return "CLEAN"
    picks = [
        rng.choice(_VIOLATIONS).format(name=rng.choice(names)) for _ in range(rng.randint(1, 3))
    ]
    return "\n".join(f"- {pick}" for pick in dict.fromkeys(picks))


def break_syntax(rng: random.Random, code: str) -> str:
    """Cut one line off two thirds of the way, as a model that lost its place does."""
    lines = code.split("\n")
    candidates = [i for i, line in enumerate(lines) if len(line.strip()) >= 12]
    rng.shuffle(candidates)
    for i in candidates[:8]:
        broken = "\n".join([*lines[:i], lines[i][: len(lines[i]) * 2 // 3], *lines[i + 1 :]])
        if not _parses(broken):
            return broken
    return code.rstrip() + "\nresult = (\n"  # an unclosed bracket never parses


def elide_body(rng: random.Random, code: str, comment: str) -> str:
    """One function's body replaced by `comment` and `...` (or `pass  # TODO implement`),
    as models do to save output."""
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


def _parses(code: str) -> bool:
    try:
        parse_module(code)
    except (SyntaxError, ValueError, RecursionError, SystemError):
        return False
    return True
