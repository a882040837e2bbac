"""The simulator's principle judge: it sees a broken principle by construction, by comparing
the candidate with the task's known-good solution, then errs with the behaviour model's
chances (sim_model.yaml `judge:`, all assumptions). Python candidates only; on any other
language it sees nothing, so every verdict is a pass.

Every draw comes from random.Random seeded with the call's key and the principle, so the
same seed gives the same verdicts whatever the call order.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from harness.pyast import compared_literals, literals, parse_module

__all__ = ["JudgeCase", "detect", "principles_in", "verdict_reply"]

_PRINCIPLE = re.compile(r"^(\d{1,2})\. \*\*([a-z][a-z0-9-]*)\*\*:", re.M)
# What a port must not reach, whatever the reference imports: the old platform by a side door.
_SIDE_DOORS = frozenset({"subprocess", "ctypes", "legacy", "legacy_sdk"})


@dataclass(frozen=True)
class JudgeCase:
    """What the simulated judge compares: the candidate and the task's known material."""

    code: str
    solution: str
    references: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    reference_modules: tuple[str, ...] = ()  # the reference files' module names (stems)


def principles_in(text: str) -> list[tuple[int, str]]:
    """(number, slug) of each principle listed in a judge prompt."""
    return [(int(m[1]), m[2]) for m in _PRINCIPLE.finditer(text)]


def verdict_reply(
    case: JudgeCase,
    principles: list[tuple[int, str]],
    rng: Callable[[object], random.Random],
    chances: tuple[float, float, float],
) -> str:
    """The simulated judge's reply: a fenced JSON verdict, or (with `malformed`) none."""
    miss, false_flag, malformed = chances
    if rng("malformed").random() < malformed:
        return "Looks fine to me overall; principle 2 might be an issue."
    broken = detect(case)
    first = next((line for line in case.code.splitlines() if line.strip()), "")
    verdicts = []
    for number, slug in principles:
        draw = rng(number).random()
        evidence = broken.get(slug)
        if evidence is not None and draw >= miss:
            verdicts.append({"principle": number, "verdict": "fail", "evidence": evidence})
        elif evidence is None and draw < false_flag:
            verdicts.append({"principle": number, "verdict": "fail", "evidence": first})
        else:
            verdicts.append({"principle": number, "verdict": "pass", "evidence": ""})
    return "```json\n" + json.dumps({"verdicts": verdicts}) + "\n```"


def detect(case: JudgeCase) -> dict[str, str]:
    """slug → the candidate's line that breaks it, for the principles the simulator can see."""
    try:
        code, solution = parse_module(case.code), parse_module(case.solution)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    lines = case.code.splitlines()
    found: dict[str, int | None] = {
        "target-only": _side_door(code, solution, case),
        "no-special-cases": _special_case(case),
        "public-names": _dropped_name(code, solution),
        "honest-results": _faked(code, solution),
    }
    return {slug: lines[n - 1].strip() for slug, n in found.items() if n is not None}


def _imports(tree: ast.Module) -> dict[str, int]:
    roots: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                roots.setdefault(alias.name.split(".")[0], node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.setdefault(node.module.split(".")[0], node.lineno)
    return roots


def _side_door(code: ast.Module, solution: ast.Module, case: JudgeCase) -> int | None:
    """An import the solution does without, of the legacy code itself, a module the legacy
    code imports, or a side door to another runtime."""
    legacy = set(_SIDE_DOORS) | set(case.reference_modules)
    for source in case.references:
        try:
            legacy |= set(_imports(parse_module(source)))
        except (SyntaxError, ValueError, RecursionError):
            continue
    ours = _imports(solution)
    hits = [line for root, line in _imports(code).items() if root in legacy and root not in ours]
    return min(hits, default=None)


def _special_case(case: JudgeCase) -> int | None:
    """A test literal the candidate compares with that the solution never compares with."""
    wanted: set[object] = set()
    for source in case.tests:
        wanted |= literals(source)
    honest = set(compared_literals(case.solution))
    compared = compared_literals(case.code).items()
    return min((line for value, line in compared if value in wanted - honest), default=None)


def _public(tree: ast.Module) -> dict[str, ast.stmt]:
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not node.name.startswith("_")
    }


def _dropped_name(code: ast.Module, solution: ast.Module) -> int | None:
    """A public name of the solution the candidate does not define: evidence, its first line."""
    ours = _public(code)
    if not set(_public(solution)) - set(ours):
        return None
    lines = [node.lineno for node in ours.values()] or [node.lineno for node in code.body]
    return min(lines, default=None)


def _faked(code: ast.Module, solution: ast.Module) -> int | None:
    """A public function whose body is one `return <constant>` where the solution's is not."""
    theirs = _public(solution)
    for name, node in _public(code).items():
        if _constant_body(node) and name in theirs and not _constant_body(theirs[name]):
            return node.lineno
    return None


def _constant_body(node: ast.stmt) -> bool:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = [
        s
        for s in node.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))  # a docstring
    ]
    return (
        len(body) == 1
        and isinstance(body[0], ast.Return)
        and (body[0].value is None or isinstance(body[0].value, ast.Constant))
    )
