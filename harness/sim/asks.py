"""The simulator with context tools: when a block its task needs (the platform's capability
stub, an already-ported example) is absent from the prompt but readable, it asks for it.

Which files it would ask for is found from the task's solution and the disk at start-up
(the platform = a top-level import of the solution that is a folder of the task list's;
its stub = the first `*.pyi` in that folder). What it then knows comes only from the tool
results: a block counts as seen when a `read_file` result holds it. Rounds:

- round 0: with the seeded chance `context_tools.ask` (sim_model.yaml), `read_file` the stub
  if capabilities are missing, and `grep` the folder for `from <platform> import` if
  examples are missing;
- round 1: `read_file` the first grep hit that is no test, no conftest, not the platform
  itself and no task's output; then the answer, with what it read as if it were in the prompt.

Every choice is a pure function of the seed, the request and the earlier rounds' results, so
a resume (results from the store) and a replay (from the recording) ask exactly the same.
"""

from __future__ import annotations

import ast
import functools
import json
import random
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from harness.llm import CallRequest, ToolCall, ToolRound, encode_tool_turn
from harness.pyast import parse_module
from harness.sim.model import Features
from harness.tasks import TaskSpec

__all__ = ["Wants", "ask", "seen"]

_MAX_HITS = 20


@dataclass(frozen=True)
class Wants:
    """What a task's solution needs from the task folder: the platform it imports (a folder
    beside the task list) and that platform's capability stub, relative to the folder."""

    platform: str | None = None
    stub: str | None = None
    excluded: tuple[str, ...] = ()  # outputs and their folders (relative): never examples

    @classmethod
    def of(cls, spec: TaskSpec, outputs: Iterable[Path]) -> Wants:
        if spec.solution is None or spec.language != "python":
            return cls()
        try:
            imported = _top_level_imports(spec.solution.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            return cls()
        for name in sorted(imported):
            folder = spec.base_dir / name
            if folder.is_dir():
                stubs = sorted(p for p in folder.rglob("*.pyi") if p.is_file())
                stub = stubs[0].relative_to(spec.base_dir).as_posix() if stubs else None
                return cls(name, stub, _excluded(spec.base_dir, outputs))
        return cls()


@functools.lru_cache(maxsize=64)
def _top_level_imports(source: str) -> frozenset[str]:
    """The top-level packages `source` imports; once per text (a bench builds a simulator per
    night and per calibration seed, each reading the same solutions)."""
    names: set[str] = set()
    for node in ast.walk(parse_module(source)):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return frozenset(names)


def _excluded(base: Path, outputs: Iterable[Path]) -> tuple[str, ...]:
    """Every task's output and its folder (other than the task list's own): what a night
    writes, so what a grep finds there depends on timing, never a stable example."""
    found: set[str] = set()
    for output in outputs:
        for path in (output, output.parent):
            if path != base and path.is_relative_to(base):
                found.add(path.relative_to(base).as_posix())
    return tuple(sorted(found))


def seen(f: Features, rounds: tuple[ToolRound, ...], wants: Wants) -> Features:
    """`f` with each block a `read_file` result of earlier rounds holds marked present."""
    capabilities, examples = f.capabilities, f.examples
    for done in rounds:
        for call, result in zip(done.calls, done.results, strict=False):
            if call.name != "read_file" or result.is_error:
                continue
            path = str(call.arguments.get("path", ""))
            if path.endswith(".pyi") and ("def " in result.content or "class " in result.content):
                capabilities = True
            elif wants.platform and _imports(result.content, wants.platform):
                examples = True
    return replace(f, capabilities=capabilities, examples=examples)


def _imports(text: str, platform: str) -> bool:
    return f"from {platform} import" in text or f"import {platform}" in text


def ask(
    request: CallRequest, f: Features, wants: Wants, rng: random.Random, chance: float
) -> str | None:
    """The tool turn this round sends (`encode_tool_turn` text), or None: answer now."""
    if not request.tools or request.tools_final or wants.platform is None:
        return None
    if not request.rounds:
        calls = _first(f, wants) if rng.random() < chance else []
    else:
        calls = _example(f, request.rounds, wants)
    if not calls:
        return None
    k = len(request.rounds)
    named = [
        ToolCall(f"sim_{request.attempt}_{k}_{i}", name, json.dumps(args, sort_keys=True))
        for i, (name, args) in enumerate(calls)
    ]
    turn = [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in named]
    return encode_tool_turn(turn, named)


def _first(f: Features, wants: Wants) -> list[tuple[str, dict]]:
    calls: list[tuple[str, dict]] = []
    if not f.capabilities and wants.stub:
        calls.append(("read_file", {"path": wants.stub}))
    if not f.examples:
        text = f"from {wants.platform} import"
        calls.append(("grep", {"text": text, "path": ".", "max_hits": _MAX_HITS}))
    return calls


def _example(f: Features, rounds: tuple[ToolRound, ...], wants: Wants) -> list[tuple[str, dict]]:
    """After a grep: read the first hit that can be an example, once."""
    if f.examples:
        return []
    asked = {str(c.arguments.get("path")) for done in rounds for c in done.calls}
    for done in rounds:
        for call, result in zip(done.calls, done.results, strict=False):
            if call.name != "grep" or result.is_error:
                continue
            for line in result.content.splitlines():
                path = line.split(":", 1)[0]
                if path not in asked and _may_be_example(path, wants):
                    return [("read_file", {"path": path})]
    return []


def _may_be_example(path: str, wants: Wants) -> bool:
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".py") or name.startswith("test_") or name == "conftest.py":
        return False
    if path == wants.platform or path.startswith(f"{wants.platform}/"):
        return False
    return not any(path == e or path.startswith(f"{e}/") for e in wants.excluded)
