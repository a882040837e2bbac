"""The task field `isolation`: boundary by default, in_process on request, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tasks import TaskListError, load_tasks
from tests.conftest import write

LIST = """
tasks:
  - id: calc
    reference: legacy/calc.py
    tests: [acceptance/test_calc.py]
    output: out/calc_service.py
{extra}"""
PROPERTY_TESTS = "from hypothesis import given\nimport calc_service\n"


def test_python_tasks_default_to_the_boundary(task_dir: Path) -> None:
    """A task list that does not say gets isolation: boundary; in_process is kept as asked."""
    plain = write(task_dir / "a.yaml", LIST.format(extra=""))
    asked = write(task_dir / "b.yaml", LIST.format(extra="    isolation: in_process\n"))

    modes = (load_tasks(plain)[0].isolation, load_tasks(asked)[0].isolation)

    assert modes == ("boundary", "in_process")


def test_an_unknown_isolation_names_the_line_and_the_choices(task_dir: Path) -> None:
    """A typo in isolation is a task list error at its line, listing the two values."""
    path = write(task_dir / "tasks.yaml", LIST.format(extra="    isolation: sideways\n"))

    with pytest.raises(TaskListError) as info:
        load_tasks(path)
    text = str(info.value)

    assert (
        "tasks.yaml:6: task 'calc', field 'isolation'" in text,
        "'boundary'" in text,
        "'in_process'" in text,
    ) == (
        True,
        True,
        True,
    )


def test_property_tests_are_refused_only_in_process(task_dir: Path) -> None:
    """hypothesis in the tests loads behind the boundary; in_process it is refused, with the fix."""
    write(task_dir / "acceptance/test_calc.py", PROPERTY_TESTS)
    boundary = write(task_dir / "a.yaml", LIST.format(extra=""))
    in_process = write(task_dir / "b.yaml", LIST.format(extra="    isolation: in_process\n"))

    load_tasks(boundary)
    with pytest.raises(TaskListError) as info:
        load_tasks(in_process)

    assert "give the task `isolation: boundary`" in str(info.value)


GO_LIST = """
tasks:
  - id: add_go
    language: go
    reference: legacy/add.go
    tests: [gotests/add_test.go]
    output: gout/add.go
{extra}"""


def test_isolation_on_a_go_task_is_an_error_at_its_line(task_dir: Path) -> None:
    """`isolation:` applies to Python only: on a Go task it is refused naming line and fix;
    without it the Go task loads."""
    write(task_dir / "legacy/add.go", "package add\n\nfunc Add(a, b int) int { return a + b }\n")
    test = "func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(1)\n\t}\n}\n"
    write(task_dir / "gotests/add_test.go", 'package add\n\nimport "testing"\n\n' + test)
    plain = write(task_dir / "a.yaml", GO_LIST.format(extra=""))
    asked = write(task_dir / "b.yaml", GO_LIST.format(extra="    isolation: in_process\n"))

    load_tasks(plain)
    with pytest.raises(TaskListError) as info:
        load_tasks(asked)

    assert "b.yaml:7: task 'add_go', field 'isolation': applies to Python, JavaScript and TypeScript tasks only" in str(
        info.value
    )
