"""Render prompts/<type>/<step>.md strictly into a Prompt (system, stable prefix, variable tail)."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2

from harness.extract import language_named, language_of_path
from harness.llm import Prompt
from harness.tasks import TaskSpec

__all__ = [
    "Principle",
    "PromptError",
    "PromptSet",
    "default_prompts_dir",
    "known_types",
    "read_principles",
    "task_context",
]

_BLOCKS = ("system", "stable", "variable")
STEP_TEMPLATES = ("write", "review", "rewrite", "fix")


class PromptError(ValueError):
    """A template is missing, malformed, or refers to a variable nobody supplied."""


@dataclass(frozen=True)
class Principle:
    """One numbered, checkable principle of a port (prompts/<type>/principles.md)."""

    number: int
    slug: str  # a short name the judge and the summary use
    text: str


_PRINCIPLE = re.compile(r"^(\d{1,2})\. \*\*([a-z][a-z0-9-]*)\*\*: (\S.*)$")


def read_principles(path: Path) -> tuple[Principle, ...]:
    """The principles in `path`: one per line, `N. **slug**: text`, numbered 1, 2, 3...;
    blank lines are skipped. Anything else is an error naming the line."""
    principles: list[Principle] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        match = _PRINCIPLE.match(line.rstrip())
        expected = len(principles) + 1
        if match is None or int(match[1]) != expected:
            raise PromptError(
                f"{path}:{lineno}: write principle {expected} as "
                f"'{expected}. **short-name**: what the port must do' (got {line[:60]!r})"
            )
        principles.append(Principle(expected, match[2], match[3]))
    if not principles:
        raise PromptError(f"{path}: no principles; write one per line as '1. **name**: text'")
    return tuple(principles)


def default_prompts_dir() -> Path:
    """The prompts/ folder beside the package in a checkout, else the installed copy."""
    checkout = Path(__file__).resolve().parent.parent / "prompts"
    if checkout.is_dir():
        return checkout
    return Path(sys.prefix) / "share" / "harness" / "prompts"


def known_types(root: Path) -> frozenset[str]:
    """Task types that have every step's template under `root`."""
    if not root.is_dir():
        return frozenset()
    return frozenset(
        d.name
        for d in root.iterdir()
        if d.is_dir() and all((d / f"{s}.md").is_file() for s in STEP_TEMPLATES)
    )


@dataclass(frozen=True)
class _File:
    path: str
    text: str
    fence: str = ""  # the fence info string its suffix calls for ("" when unknown)


def _file(task: TaskSpec, path: Path) -> _File:
    try:
        shown = path.relative_to(task.base_dir)
    except ValueError:
        shown = Path(path.name)
    language = language_of_path(path)
    return _File(str(shown), path.read_text(), language.fence if language else "")


def task_context(task: TaskSpec, required_names: tuple[str, ...] = ()) -> dict[str, Any]:
    """The stable, per-task template variables (read once per task). `language` is the
    output's (title, fence, idioms); `reference_language` the first reference file's, by
    its suffix (None when no known language has it)."""
    return {
        "task_id": task.id,
        "module_name": task.module_name,
        "output_name": task.output.name,
        "language": language_named(task.language),
        "reference_language": language_of_path(task.reference[0]) if task.reference else None,
        "references": [_file(task, p) for p in task.reference],
        "tests": [_file(task, p) for p in task.tests],
        "examples": [_file(task, p) for p in task.examples],
        "capabilities": _file(task, task.capabilities) if task.capabilities else None,
        "instructions": task.instructions,
        "required_names": sorted(required_names),
    }


class PromptSet:
    """The templates of one task type; every step renders to the same three blocks."""

    def __init__(self, root: Path, task_type: str) -> None:
        folder = root / task_type
        if not folder.is_dir():
            raise PromptError(f"no prompts for task type {task_type!r}: create {folder}/")
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(folder),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            autoescape=False,
        )
        self._folder = folder
        self._templates = {step: self._load(step) for step in STEP_TEMPLATES}

    @cached_property
    def principles(self) -> tuple[Principle, ...]:
        """The type's principles (principles.md), read on first use: only the judge needs
        them, so with `loop.judge` off the file is never read (nor can it refuse a run)."""
        path = self._folder / "principles.md"
        return read_principles(path) if path.is_file() else ()

    def _load(self, step: str) -> jinja2.Template:
        try:
            template = self._env.get_template(f"{step}.md")
        except jinja2.TemplateNotFound as exc:
            raise PromptError(f"missing template {self._folder / f'{step}.md'}") from exc
        except jinja2.TemplateSyntaxError as exc:
            raise PromptError(f"{exc.filename}:{exc.lineno}: {exc.message}") from exc
        missing = [b for b in _BLOCKS if b not in template.blocks]
        if missing:
            raise PromptError(f"{self._folder / f'{step}.md'}: add block(s) {', '.join(missing)}")
        return template

    def check(self, context: Mapping[str, Any], judge: bool = False) -> None:
        """Render every step once with a task's context and sample per-step values, so a
        template naming a variable nobody supplies fails at start-up, not after a paid call.
        With `judge`, the judge's template and principles must exist and render too."""
        sample = {
            "code": "",
            "violations": [],
            "failures": [],
            "passed": 0,
            "total": 0,
            "full_output": "",
            "fix_format": "edits",
            "edit_error": None,
        }
        for step in STEP_TEMPLATES:
            self.render(step, {**sample, **context})
        if judge:
            for name in ("judge.md", "principles.md"):
                if not (self._folder / name).is_file():
                    raise PromptError(
                        f"loop.judge is on but {self._folder / name} is missing: add it, "
                        "or turn the judge off (loop: {judge: {enabled: false}})"
                    )
            self.render("judge", {**sample, **context})

    def render(self, step: str, variables: Mapping[str, Any]) -> Prompt:
        """Render `step`; a variable the template uses but `variables` lacks is an error."""
        if step not in self._templates:  # the judge's, loaded on first use
            self._templates[step] = self._load(step)
        template = self._templates[step]
        if step == "judge":
            variables = {**variables, "principles": self.principles}
        context = template.new_context(dict(variables))
        try:
            parts = {b: "".join(template.blocks[b](context)).strip("\n") for b in _BLOCKS}
        except jinja2.UndefinedError as exc:
            raise PromptError(f"{self._folder / f'{step}.md'}: {exc.message}") from exc
        return Prompt(parts["system"], parts["stable"] + "\n", "\n" + parts["variable"] + "\n")
