"""A validated task entry → its TaskSpec: paths resolved, the runner's defaults filled in."""

from __future__ import annotations

from pathlib import Path

from harness.tasks.language import Runner
from harness.tasks.paths import Paths
from harness.tasks.schema import TaskModel
from harness.tasks.spec import ISOLATION_DEFAULT, TaskSpec

__all__ = ["build_spec"]


def build_spec(
    paths: Paths, source: Path, model: TaskModel, output: Path | None, line: int, runner: Runner
) -> TaskSpec:
    """The TaskSpec of a task that passed every check (`source`: the task list file)."""

    def each(values: list[str]) -> tuple[Path, ...]:
        resolved = (paths.resolve(v) for v in values)
        return tuple(dict.fromkeys(p for p in resolved if isinstance(p, Path)))

    def one(value: str | None) -> Path | None:
        found = paths.resolve(value) if value else None
        return found if isinstance(found, Path) else None

    base = paths.base
    return TaskSpec(
        id=model.id,
        base_dir=base,
        reference=each(model.reference),
        tests=each(model.tests),
        hidden_tests=each(model.hidden_tests),
        output=output if output is not None else base / model.output,
        type=model.type,
        examples=each(model.examples),
        capabilities=one(model.capabilities),
        support=each(model.support),
        instructions=model.instructions,
        max_attempts=model.max_attempts,
        solution=one(model.solution),
        language=runner.language,
        test_command=runner.test_command,
        results=runner.results,
        isolation=model.isolation or ISOLATION_DEFAULT,
        differential=_differential(model),
        source=source.resolve(),
        line=line,
    )


def _differential(model: TaskModel) -> tuple[tuple[str, object], ...]:
    if model.differential is None:
        return ()
    found = model.differential.model_dump(exclude_none=True)
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(found.items()))
