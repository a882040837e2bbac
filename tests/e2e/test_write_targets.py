"""Every path the harness writes passes one check: never an input, never a directory, an
existing file of the user's replaced only with --force; each refusal is exit 2, nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.cli import main


def _export(out: Path, night: Path, *flags: str) -> int:
    return main(["export", "prefs", str(night), "--out", str(out), *flags])


def test_export_refuses_to_replace_an_existing_file_without_force(example_nights, tmp_path, capsys):
    """--out naming a file that exists (e.g. the task list) is exit 2 and the file is intact."""
    out = tmp_path / "tasks.yaml"
    out.write_text("tasks: []\n")

    code = _export(out, example_nights(2))

    err = capsys.readouterr().err
    assert (code, "already exists" in err, "--force" in err) == (2, True, True)
    assert out.read_text() == "tasks: []\n"


def test_export_with_force_replaces_the_file(example_nights, tmp_path, capsys):
    """--force is the documented way to replace an earlier export."""
    out = tmp_path / "prefs.jsonl"
    out.write_text("old\n")

    code = _export(out, example_nights(2), "--force")

    assert (code, out.read_text() != "old\n") == (0, True)


def test_export_to_a_directory_is_exit_2_not_a_traceback(example_nights, tmp_path, capsys):
    """--out DIR says it is a directory and names a file to use instead."""
    code = _export(tmp_path, example_nights(2))

    err = capsys.readouterr().err
    assert (code, "is a directory" in err, "Traceback" in err) == (2, True, False)


def test_export_never_writes_over_the_runs_task_list_even_with_force(
    example_nights, tmp_path, capsys
):
    """The night's own task list is an input: refused even with --force."""
    night = example_nights(2)
    tasks = night.parent.parent / "example" / "tasks.yaml"
    before = tasks.read_text()

    code = _export(tasks, night, "--force")

    err = capsys.readouterr().err
    assert (code, "the task list of run" in err, tasks.read_text()) == (2, True, before)


def test_tasks_add_refuses_an_output_that_tasks_validate_would_refuse(
    task_dir: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    """`tasks add --output ../../outside/x.py` is refused by the same write roots as validate."""
    project = tmp_path / "a" / "b"
    project.mkdir(parents=True)
    for name in ("legacy", "acceptance"):
        shutil.move(task_dir / name, project / name)
    monkeypatch.chdir(project)
    argv = ["--id", "x", "--reference", "legacy/calc.py", "--tests", "acceptance/test_calc.py"]

    code = main(["tasks", "add", "tasks.yaml", *argv, "--output", "../../outside/x.py"])

    err = capsys.readouterr().err
    assert (code, (project / "tasks.yaml").exists(), "was not added" in err) == (2, False, True)
