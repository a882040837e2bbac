"""Task list loading and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tasks import TaskListError, load_tasks
from tests.conftest import write

VALID = """
defaults:
  max_attempts: 3
tasks:
  - id: calc
    reference: legacy/calc.py
    tests: [acceptance/test_calc.py]
    output: out/calc_service.py
    solution: solutions/calc_service.py
"""


def problems(path: Path, **kwargs) -> list[str]:
    with pytest.raises(TaskListError) as info:
        load_tasks(path, **kwargs)
    return [str(p) for p in info.value.problems]


def test_valid_list_resolves_paths_against_its_folder(task_dir: Path) -> None:
    """Paths become absolute, relative to the task list's folder; defaults apply."""
    path = write(task_dir / "tasks.yaml", VALID)

    [spec] = load_tasks(path)

    assert spec.reference == ((task_dir / "legacy/calc.py").resolve(),)
    assert spec.output == (task_dir / "out/calc_service.py").resolve()
    assert spec.output_rel == Path("out/calc_service.py")
    assert spec.module_name == "calc_service"
    assert spec.max_attempts == 3
    assert spec.type == "service_port"
    assert spec.line == 4


def test_unknown_key_suggests_the_closest_valid_key(task_dir: Path) -> None:
    """A typo names file, line, task, field and the key it probably meant."""
    path = write(
        task_dir / "tasks.yaml", VALID.replace("    solution:", "    refrence: x\n    solution:")
    )

    [message] = problems(path)

    assert (
        message
        == f"{path}:8: task 'calc', field 'refrence': unknown key; did you mean 'reference'?"
    )


def test_every_problem_is_reported_at_once(task_dir: Path) -> None:
    """Missing fields, wrong types, missing files and duplicate ids all appear together."""
    text = (
        VALID
        + """
  - id: calc
    reference: legacy/calc.py
    tests: acceptance/test_calc.py
    output: out/other.py
  - id: broken
    tests: acceptance/nope.py
    output: out/b.py
    max_attempts: lots
  - id: typed
    reference: legacy/missing.py
    tests: acceptance/test_calc.py
    output: out/typed.txt
"""
    )
    path = write(task_dir / "tasks.yaml", text)

    found = problems(path)

    assert any("task 'calc', field 'id': duplicate id (first used on line 4)" in p for p in found)
    assert any("task 'broken', field 'reference': required field is missing" in p for p in found)
    assert any("task 'broken', field 'max_attempts'" in p and "'lots'" in p for p in found)
    assert any(
        ":19: task 'typed', field 'reference': 'legacy/missing.py' does not exist" in p
        for p in found
    )
    assert any("task 'typed', field 'output'" in p and ".py file" in p for p in found)
    assert len(found) == 5


def test_unknown_task_type_is_an_error_when_types_are_known(task_dir: Path) -> None:
    """A type with no prompts is caught at validation, not mid-run."""
    path = write(task_dir / "tasks.yaml", VALID.replace("max_attempts: 3", "type: webapp"))

    [message] = problems(path, known_types={"service_port"})

    assert "field 'type': no prompts for type 'webapp'; known types: service_port" in message


def test_two_tasks_writing_one_output_are_refused(task_dir: Path) -> None:
    """Two tasks may not ship to the same file."""
    path = write(
        task_dir / "tasks.yaml", VALID + VALID.split("tasks:\n")[1].replace("id: calc", "id: calc2")
    )

    [message] = problems(path)

    assert "task 'calc2', field 'output': same output as task 'calc'" in message


def test_not_yaml_names_the_line(task_dir: Path) -> None:
    """Broken YAML is reported with its line, not a traceback."""
    path = write(task_dir / "tasks.yaml", "tasks:\n  - id: [unclosed\n")

    [message] = problems(path)

    assert message.startswith(f"{path}:")
    assert "not valid YAML" in message


def test_wrong_shape_and_unknown_top_level_keys(task_dir: Path) -> None:
    """A list without 'tasks:' and stray top-level keys are explained."""
    assert (
        "expected a mapping with a 'tasks:' list"
        in problems(write(task_dir / "a.yaml", "- id: x\n"))[0]
    )
    found = problems(write(task_dir / "b.yaml", VALID + "taks: []\n"))
    assert "field 'taks': unknown top-level key" in found[0]


def test_support_may_name_a_folder(task_dir: Path) -> None:
    """Support entries are files or whole folders."""
    (task_dir / "fixtures").mkdir()
    path = write(task_dir / "tasks.yaml", VALID + "    support: [fixtures/]\n")

    [spec] = load_tasks(path)

    assert spec.support == ((task_dir / "fixtures").resolve(),)
