"""Inputs digest: stable across runs, folders and machines; changes with any real input."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.config import RouteConfig
from harness.llm import Route
from harness.tasks import inputs_digest, load_tasks
from harness.tasks.spec import TaskSpec
from tests.conftest import write

ROUTES = {
    "cheap": Route("cheap", "gemini", "gemini-3-flash", 8192),
    "mid": Route("mid", "anthropic", "claude-sonnet-4-6", 16000),
}


@pytest.fixture
def project(task_dir: Path) -> Path:
    """A task list with support files and a folder, plus its own prompts/ tree."""
    write(task_dir / "conftest.py", "import pytest\n")
    write(task_dir / "fixtures" / "orders.json", "[1, 2]\n")
    write(task_dir / "fixtures" / "deep" / "more.json", "{}\n")
    write(task_dir / "gold" / "users_service.py", "def get():\n    return 1\n")
    for name in ("_system.md", "write.md", "review.md", "rewrite.md", "fix.md"):
        write(task_dir / "prompts" / "service_port" / name, f"template {name}\n")
    write(
        task_dir / "tasks.yaml",
        """
        tasks:
          - id: calc
            reference: legacy/calc.py
            tests: acceptance/test_calc.py
            output: out/calc_service.py
            support: [conftest.py, fixtures/]
            examples: gold/users_service.py
            instructions: keep it small
        """,
    )
    return task_dir


def _spec(root: Path) -> TaskSpec:
    return load_tasks(root / "tasks.yaml")[0]


def _digest(root: Path, routes: dict[str, object] = ROUTES) -> str:
    return inputs_digest(_spec(root), root / "prompts", routes)


def test_digest_is_stable_and_independent_of_location(project: Path, tmp_path_factory) -> None:
    """The same inputs in another folder (another machine) give the same digest."""
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "checkout"
    shutil.copytree(project, elsewhere)

    assert _digest(project) == _digest(project) == _digest(elsewhere)


def test_digest_ignores_mtimes_and_bytecode_caches(project: Path) -> None:
    """Touching files or running the tests locally (__pycache__) does not make a task stale."""
    before = _digest(project)
    os.utime(project / "legacy" / "calc.py", (1, 1))
    write(project / "fixtures" / "__pycache__" / "x.cpython-311.pyc", "junk")
    write(project / "fixtures" / "stray.pyc", "junk")

    assert before == _digest(project)


def test_route_values_of_any_shape_hash_alike(project: Path) -> None:
    """Route, RouteConfig and mappings with equal provider/model/max_tokens agree, in any order."""
    configs = {
        t: RouteConfig(provider=r.provider, model=r.model, max_tokens=r.max_tokens)
        for t, r in reversed(ROUTES.items())
    }
    mappings = {
        t: {"provider": r.provider, "model": r.model, "max_tokens": r.max_tokens}
        for t, r in ROUTES.items()
    }

    assert _digest(project) == _digest(project, configs) == _digest(project, mappings)


def _edit(path: str, text: str) -> Callable[[Path], None]:
    return lambda root: write(root / path, text)


CHANGES = {
    "reference": _edit("legacy/calc.py", "def add(a, b):\n    return a + b\n"),
    "tests": _edit("acceptance/test_calc.py", "def test_nothing():\n    pass\n"),
    "support file": _edit("conftest.py", "# changed\n"),
    "file inside a support folder": _edit("fixtures/deep/more.json", '{"a": 1}\n'),
    "new file in a support folder": _edit("fixtures/new.json", "[]\n"),
    "example": _edit("gold/users_service.py", "X = 2\n"),
    "prompt template": _edit("prompts/service_port/fix.md", "fix it\n"),
    "new prompt file": _edit("prompts/service_port/_context.md", "context\n"),
    "instructions": lambda root: (root / "tasks.yaml").write_text(
        (root / "tasks.yaml").read_text().replace("keep it small", "keep it tiny")
    ),
    "max_attempts": lambda root: (root / "tasks.yaml").write_text(
        (root / "tasks.yaml").read_text() + "    max_attempts: 3\n"
    ),
    "test command": lambda root: (root / "tasks.yaml").write_text(
        (root / "tasks.yaml").read_text()
        + '    test_command: [python, -m, pytest, "--junitxml={results}"]\n'
    ),
    "renamed support file": lambda root: (root / "fixtures" / "orders.json").rename(
        root / "fixtures" / "orders2.json"
    ),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_digest_changes_with_every_input(project: Path, change: Callable[[Path], None]) -> None:
    """Any change to what a run would see gives a different digest."""
    before = _digest(project)
    change(project)

    assert before != _digest(project)


@pytest.mark.parametrize("field", ["provider", "model", "max_tokens"])
def test_digest_changes_with_the_routes(project: Path, field: str) -> None:
    """A different provider, model or output cap for any tier makes the task stale."""
    old = ROUTES["mid"]
    new = {"provider": old.provider, "model": old.model, "max_tokens": old.max_tokens}
    new[field] = {"provider": "sim", "model": "other", "max_tokens": 1}[field]

    assert _digest(project) != _digest(project, {**ROUTES, "mid": new})


def test_extra_inputs_count_too(project: Path) -> None:
    """A change in the extra inputs (e.g. the guardrails policy) makes the task stale."""
    spec, prompts = _spec(project), project / "prompts"
    digests = {
        inputs_digest(spec, prompts, ROUTES, extra)
        for extra in (None, {}, {"policy": "a"}, {"policy": "b"})
    }

    assert len(digests) == 3
