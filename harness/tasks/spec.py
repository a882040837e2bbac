"""TaskSpec: one validated task, every path absolute."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["ISOLATION_DEFAULT", "TaskSpec"]

# How a Python task's candidate is kept from its tests when the task list does not say: in a
# process of its own behind the value boundary (tasks/example passes the same tests both ways).
ISOLATION_DEFAULT = "boundary"


@dataclass(frozen=True)
class TaskSpec:
    """A task from the task list after validation.

    Paths are absolute, resolved against `base_dir` (the task list's folder). `output`
    is where the harness ships the best candidate; inside the test scratch directory the
    candidate sits at `output_rel`. `solution` is read only by the simulator. `hidden_tests`
    run with `tests` and decide whether the task passes, but no prompt ever includes them.
    """

    id: str
    base_dir: Path
    reference: tuple[Path, ...]
    tests: tuple[Path, ...]
    output: Path
    type: str = "service_port"
    examples: tuple[Path, ...] = ()
    capabilities: Path | None = None
    support: tuple[Path, ...] = ()
    hidden_tests: tuple[Path, ...] = ()  # run and scored with the tests, never shown to a model
    instructions: str = ""
    max_attempts: int = 5
    solution: Path | None = None
    language: str = "python"  # of the output: selects fences, syntax check, prompts, runner
    test_command: tuple[str, ...] = ()  # argv run in the scratch dir; () = built-in pytest
    results: str = "pytest"  # how outcomes are read: pytest (built-in) | junit | go-json
    # Python: "boundary" runs the candidate in processes of its own, values crossing by a
    # strict codec; "in_process" runs it inside the test process, detection-guarded.
    isolation: str = ISOLATION_DEFAULT
    # The task's `differential:` keys over the config's, as (key, value) pairs.
    differential: tuple[tuple[str, object], ...] = ()
    source: Path | None = None  # the task list file
    line: int = 0  # line of the task's entry in `source`

    @property
    def output_rel(self) -> Path:
        """The candidate's place in the test scratch dir: relative to the task list's folder,
        or just its basename when the operator ships it outside that folder."""
        try:
            return self.output.relative_to(self.base_dir)
        except ValueError:
            return Path(self.output.name)

    @property
    def module_name(self) -> str:
        """The basename tests import the candidate by."""
        return self.output.stem
