"""`harness tasks add`: validated appends that keep the file's bytes, or nothing at all."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import _ADD_FIELDS, _parser, main
from harness.errors import BadInput
from harness.prompts import default_prompts_dir, known_types
from harness.tasks import add_task, load_tasks
from tests.conftest import write

ORIGINAL = """\
# Nightly port of the calculator services.
defaults:
  max_attempts: 4   # keep it cheap

tasks:
  # the first one
  - id: calc                            # unique
    reference: legacy/calc.py
    tests: 'acceptance/test_calc.py'
    output: out/calc_service.py
    instructions: "Keep the 'status' field."

  - id: calc2
    reference:
      - legacy/calc.py
      - legacy/extra.py
    tests: acceptance/test_calc.py
    output: out/calc2_service.py   # shipped here
# trailing comment
"""


@pytest.fixture
def tasks_file(task_dir: Path) -> Path:
    write(task_dir / "legacy" / "extra.py", "X = 1\n")
    write(task_dir / "conftest.py", "\n")
    write(task_dir / "fixtures" / "data.json", "[]\n")
    path = task_dir / "tasks.yaml"
    path.write_text(ORIGINAL)
    return path


def _add(
    path: Path, *extra: str, task_id: str = "calc3", output: str = "out/calc3_service.py"
) -> None:
    args = _parser().parse_args(
        [
            "tasks",
            "add",
            str(path),
            "--id",
            task_id,
            "--reference",
            "legacy/calc.py",
            "--tests",
            "acceptance/test_calc.py",
            "--output",
            output,
            *extra,
        ]
    )
    fields = {name: getattr(args, name) for name in _ADD_FIELDS}
    add_task(args.file, fields, known_types=known_types(default_prompts_dir()))


def _only_insertions(before: str, after: str) -> list[str]:
    """The lines added, asserting nothing that was there changed or moved."""
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    assert all(op[0] == "insert" for op in ops), ops
    return [line for op in ops for line in after.splitlines()[op[3] : op[4]]]


def test_append_keeps_every_existing_byte(tasks_file: Path) -> None:
    """Comments, quoting, spacing and blank lines stay; the entry lands after the last task."""
    _add(tasks_file, "--support", "conftest.py", "fixtures/")
    text = tasks_file.read_text()

    assert _only_insertions(ORIGINAL, text) == [
        "",
        "  - id: calc3",
        "    reference: legacy/calc.py",
        "    tests: acceptance/test_calc.py",
        "    output: out/calc3_service.py",
        "    support: [conftest.py, fixtures/]",
    ]
    assert text.endswith("# trailing comment\n")


def test_added_task_validates_with_its_fields(tasks_file: Path) -> None:
    """The new entry loads as the task asked for, with defaults still applied from the file."""
    _add(
        tasks_file,
        "--examples",
        "solutions/calc_service.py",
        "--instructions",
        "be brief",
        "--max-attempts",
        "7",
    )
    spec = load_tasks(tasks_file)[-1]

    assert (
        spec.id,
        spec.max_attempts,
        spec.instructions,
        tuple(str(p.relative_to(spec.base_dir)) for p in spec.examples),
    ) == ("calc3", 7, "be brief", ("solutions/calc_service.py",))


def test_added_task_keeps_its_language_fields(tasks_file: Path, capsys) -> None:
    """--language, --test-command (split like shell words) and --results round-trip, and
    `tasks list` shows the language."""
    _add(
        tasks_file,
        "--language",
        "javascript",
        "--test-command",
        "node --test --test-reporter=junit --test-reporter-destination={results} {tests}",
        "--results",
        "junit",
        output="out/calc3.mjs",
    )
    spec = load_tasks(tasks_file)[-1]
    main(["tasks", "list", str(tasks_file)])

    assert (spec.language, spec.test_command[-2:], spec.results) == (
        "javascript",
        ("--test-reporter-destination={results}", "{tests}"),
        "junit",
    )
    assert (
        "calc3\tservice_port\tjavascript\tlegacy/calc.py → out/calc3.mjs" in capsys.readouterr().out
    )


def test_added_task_keeps_its_isolation_and_hidden_tests(tasks_file: Path) -> None:
    """--isolation and --hidden-tests reach the task list and load back as given."""
    write(tasks_file.parent / "hidden" / "test_more.py", "def test_x():\n    assert True\n")

    _add(tasks_file, "--isolation", "in_process", "--hidden-tests", "hidden/test_more.py")

    spec = load_tasks(tasks_file)[-1]
    assert (spec.isolation, [p.name for p in spec.hidden_tests]) == ("in_process", ["test_more.py"])


def test_results_path_flag_is_refused_with_what_replaced_it(tasks_file: Path, capsys) -> None:
    """`tasks add --results-path` exits 2 saying to put {results} in the command; no file change."""
    before = tasks_file.read_bytes()
    with pytest.raises(SystemExit) as info:
        main(
            [
                *("tasks", "add", str(tasks_file), "--id", "x"),
                *("--reference", "legacy/calc.py", "--tests", "acceptance/test_calc.py"),
                *("--output", "out/x.py", "--results-path", "r.xml"),
            ]
        )

    assert (info.value.code, tasks_file.read_bytes()) == (2, before)
    assert (
        "--results-path is not used: the harness hands the test command a private pipe as "
        "{results}; drop it and put {results} in --test-command" in capsys.readouterr().err
    )


def test_defaults_are_not_duplicated(tasks_file: Path) -> None:
    """Values equal to the file's defaults or the built-in ones are left out of the entry."""
    _add(tasks_file, "--max-attempts", "4", "--type", "service_port")
    added = _only_insertions(ORIGINAL, tasks_file.read_text())

    assert not any("max_attempts" in line or "type:" in line for line in added)


def test_yaml_1_1_booleans_stay_strings(tasks_file: Path) -> None:
    """Text the task loader would read as a boolean or number is quoted."""
    _add(tasks_file, "--instructions", "yes")

    assert load_tasks(tasks_file)[-1].instructions == "yes"


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=60)
    .map(lambda s: s.strip())
    .filter(bool)
    | st.sampled_from(["line 1\nline 2", "a: b # c", "- x", "{x}", "'q' \"d\"", "no", "0x10"])
)
def test_any_instructions_round_trip(tasks_file: Path, text: str) -> None:
    """Any instructions text reads back unchanged, and the rest of the file stays as it was."""
    tasks_file.write_text(ORIGINAL)
    _add(tasks_file, f"--instructions={text}")  # `=`: text may start with a dash
    _only_insertions(ORIGINAL, tasks_file.read_text())

    assert text == load_tasks(tasks_file)[-1].instructions


@pytest.mark.parametrize(
    ("extra", "task_id", "expected"),
    [
        (["--support", "nope/"], "calc3", "task 'calc3', field 'support': 'nope/' does not exist"),
        ([], "calc", "task 'calc', field 'id': duplicate id"),
        (["--type", "nosuch"], "calc3", "field 'type': no prompts for type 'nosuch'"),
        (["--max-attempts", "0"], "calc3", "field 'max_attempts': must be between 1 and 50"),
        ([], "bad id!", "field 'id': use only letters, digits, - and _"),
    ],
)
def test_bad_task_is_refused_and_file_untouched(
    tasks_file: Path, extra: list[str], task_id: str, expected: str
) -> None:
    """A bad task gets the validator's own message and leaves the file byte-for-byte alone."""
    before = tasks_file.read_bytes()
    with pytest.raises(BadInput) as info:
        _add(tasks_file, *extra, task_id=task_id, output=f"out/{task_id.split()[0]}_x.py")

    assert (True, True, before, ["tasks.yaml"]) == (
        expected in str(info.value),
        f"{tasks_file}:" in str(info.value),
        tasks_file.read_bytes(),
        sorted(p.name for p in tasks_file.parent.glob("*.yaml*")),
    )


def test_refusal_names_the_real_file_not_the_temp(tasks_file: Path) -> None:
    """Problems point at the task list itself, even in the message text."""
    with pytest.raises(BadInput) as info:
        _add(tasks_file, "--support", "nope/")

    assert ".tmp" not in str(info.value)


def test_file_mode_is_kept(tasks_file: Path) -> None:
    """The rewritten file keeps the original's permissions."""
    os.chmod(tasks_file, 0o640)
    _add(tasks_file)

    assert tasks_file.stat().st_mode & 0o777 == 0o640


def test_flow_style_task_list_falls_back_to_round_trip(task_dir: Path) -> None:
    """An empty `tasks: []` list (no entry to splice after) still gets a valid new task."""
    path = write(task_dir / "tasks.yaml", "# my list\ndefaults: {max_attempts: 3}\ntasks: []\n")
    _add(path)

    assert (
        [s.id for s in load_tasks(path)],
        path.read_text().startswith("# my list\n"),
    ) == (["calc3"], True)


def test_missing_file_is_created(task_dir: Path) -> None:
    """Adding to a task list that does not exist yet creates it."""
    path = task_dir / "new.yaml"
    _add(path)

    assert [s.id for s in load_tasks(path)] == ["calc3"]


def test_invalid_existing_file_is_refused_with_validation_errors(task_dir: Path) -> None:
    """A file that is not a task list is refused with the validator's message, unchanged."""
    path = write(task_dir / "tasks.yaml", "tasks: [unclosed\n")
    before = path.read_bytes()
    with pytest.raises(BadInput) as info:
        _add(path)

    assert ("not valid YAML" in str(info.value), before) == (True, path.read_bytes())


def test_blank_lines_follow_the_files_style(task_dir: Path) -> None:
    """Entries packed without blank lines get a new entry without one, at their indentation."""
    original = (
        "tasks:\n- id: calc\n  reference: legacy/calc.py\n"
        "  tests: acceptance/test_calc.py\n  output: out/calc_service.py\n"
    )
    path = write(task_dir / "tasks.yaml", original)
    _add(path)

    assert (
        original
        + (
            "- id: calc3\n  reference: legacy/calc.py\n  tests: acceptance/test_calc.py\n"
            "  output: out/calc3_service.py\n"
        )
        == path.read_text()
    )
