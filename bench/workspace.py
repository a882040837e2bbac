"""Simulated task lists for the bench: the example tasks, replicated under new ids."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.tasks import TaskSpec, load_tasks

__all__ = ["EXAMPLE", "Workspace", "make_workspace"]

EXAMPLE = Path(__file__).resolve().parent.parent / "tasks" / "example"
_IGNORE = shutil.ignore_patterns("out", "__pycache__", ".ruff_cache", "tasks.yaml")


@dataclass(frozen=True)
class Workspace:
    """A private copy of the example folder holding a generated task list."""

    root: Path
    tasks_yaml: Path
    ids: tuple[str, ...]


def _rel(spec: TaskSpec, path: Path) -> str:
    return str(path.relative_to(spec.base_dir))


def _entry(spec: TaskSpec, task_id: str, max_attempts: int | None) -> dict[str, object]:
    """One task of the generated list: the template's inputs, its own id and output folder."""
    entry: dict[str, object] = {
        "id": task_id,
        "reference": [_rel(spec, p) for p in spec.reference],
        "tests": [_rel(spec, p) for p in spec.tests],
        "output": f"out/{task_id}/{spec.output.name}",
        "type": spec.type,
        "examples": [_rel(spec, p) for p in spec.examples],
        "support": [_rel(spec, p) for p in spec.support],
        "max_attempts": min(spec.max_attempts, max_attempts or spec.max_attempts),
    }
    if spec.capabilities is not None:
        entry["capabilities"] = _rel(spec, spec.capabilities)
    if spec.solution is not None:
        entry["solution"] = _rel(spec, spec.solution)
    if spec.instructions:
        entry["instructions"] = spec.instructions
    return entry


def templates(example: Path = EXAMPLE) -> list[TaskSpec]:
    """The example tasks the generated lists replicate (they must carry a `solution`)."""
    yaml_path = example / "tasks.yaml"
    if not yaml_path.is_file():
        raise SystemExit(f"bench: {yaml_path} is missing; the bench replicates its tasks")
    specs = [s for s in load_tasks(yaml_path) if s.solution is not None]
    if not specs:
        raise SystemExit(f"bench: no task in {yaml_path} has a `solution` for the simulator")
    return specs


def make_workspace(
    target: Path, count: int, max_attempts: int | None = None, example: Path = EXAMPLE
) -> Workspace:
    """Copy the example folder to `target` and write a `count`-task list, round robin over
    the example's tasks; the simulator seeds each walk by task id, so replicas differ.
    `max_attempts` lowers every task's limit (the smoke test's shortcut)."""
    specs = templates(example)
    shutil.copytree(example, target, ignore=_IGNORE, dirs_exist_ok=True)
    entries = []
    for i in range(count):
        spec = specs[i % len(specs)]
        entries.append(_entry(spec, f"{spec.id}_{i // len(specs) + 1:02d}", max_attempts))
    tasks_yaml = target / "bench_tasks.yaml"
    tasks_yaml.write_text(yaml.safe_dump({"tasks": entries}, sort_keys=False, width=1000))
    return Workspace(target, tasks_yaml, tuple(str(e["id"]) for e in entries))
