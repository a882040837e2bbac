"""Task list loading and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
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
    assert any(
        "task 'broken', field 'tests': 'acceptance/nope.py' does not exist" in p for p in found
    )
    assert len(found) == 6


def test_unknown_task_type_is_an_error_when_types_are_known(task_dir: Path) -> None:
    """A type with no prompts is caught at validation, not mid-run; a default's at its line."""
    path = write(task_dir / "tasks.yaml", VALID.replace("max_attempts: 3", "type: webapp"))

    [message] = problems(path, known_types={"service_port"})

    assert message == (
        f"{path}:2: task list, field 'defaults.type': no prompts for type 'webapp'; "
        "known types: service_port"
    )


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


@pytest.mark.parametrize(
    "links",
    [
        {"fixtures/loop": "."},  # a folder that holds itself
        {"fixtures/deep/up": "../.."},  # an ancestor, further down
        {"fixtures/a/to_b": "../b", "fixtures/b/to_a": "../a"},  # two links, each the other's way
    ],
    ids=["self", "ancestor", "mutual"],
)
def test_a_support_folder_whose_links_loop_is_refused_at_load(task_dir: Path, links) -> None:
    """Copying a support folder follows its links: one that leads back into itself would copy
    forever (the test run would crash after its paid call), so the list is refused, naming it."""
    for name in ("fixtures/deep", "fixtures/a", "fixtures/b"):
        (task_dir / name).mkdir(parents=True)
    for link, target in links.items():
        (task_dir / link).symlink_to(target)
    path = write(task_dir / "tasks.yaml", VALID + "    support: [fixtures/]\n")

    found = problems(path)

    assert len(found) == 1 and "symlink loop" in found[0] and "fixtures/" in found[0], found


FIVE_PROBLEMS = """
tasks:
  - id: calc
    reference: legacy/calc.py
    tests: acceptance/test_calc.py
    output: out/calc_service.py
    refrence: legacy/calc.py
  - id: calc
    reference: legacy/calc.py
    tests: acceptance/test_calc.py
    output: out/calc2_service.py
  - id: gone
    reference: legacy/gone.py
    tests: acceptance/test_calc.py
    output: out/gone_service.py
  - id: text
    reference: legacy/calc.py
    tests: acceptance/test_calc.py
    output: out/text_service.txt
  - id: away
    reference: legacy/calc.py
    tests: acceptance/test_calc.py
    output: /tmp/elsewhere/away_service.py
"""


def test_validate_prints_five_different_problems_with_their_lines(task_dir: Path, capsys) -> None:
    """A typo, a duplicate id, a missing file, a bad output name and an output outside the
    write roots: one `tasks validate` prints all five, each at its own line, sorted."""
    path = write(task_dir / "tasks.yaml", FIVE_PROBLEMS)

    code = main(["tasks", "validate", str(path)])

    lines = capsys.readouterr().err.splitlines()
    assert code == 2
    assert [line.split(": ", 2)[:2] for line in lines[1:]] == [
        [f"{path}:6", "task 'calc', field 'refrence'"],
        [f"{path}:7", "task 'calc', field 'id'"],
        [f"{path}:12", "task 'gone', field 'reference'"],
        [f"{path}:18", "task 'text', field 'output'"],
        [f"{path}:22", "task 'away', field 'output'"],
    ]
    assert "outside every write root" in lines[-1]


def test_validate_says_nothing_on_stderr_when_the_list_is_valid(task_dir: Path, capsys) -> None:
    """`tasks validate` prints its answer on stdout and no log line on stderr."""
    path = write(task_dir / "tasks.yaml", VALID)

    code = main(["tasks", "validate", str(path)])

    out = (
        f"{path}: 1 task(s), all valid\ncalc: the same results in_process and behind the boundary\n"
    )
    assert (code, capsys.readouterr()) == (0, (out, ""))


def test_validate_runs_a_python_reference_both_ways_when_there_is_no_solution(
    task_dir: Path, capsys
) -> None:
    """With no `solution`, a reference in the output's language is what runs both ways."""
    path = write(
        task_dir / "tasks.yaml", VALID.replace("    solution: solutions/calc_service.py\n", "")
    )

    code = main(["tasks", "validate", str(path)])

    assert (code, capsys.readouterr().out.splitlines()[-1]) == (
        0,
        "calc: the same results in_process and behind the boundary",
    )


def _nothing_may_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a test run was started")

    monkeypatch.setattr("harness.testrun.isolation.run_tests", refuse)
    monkeypatch.setattr("harness.testrun.collectable.launch_all", refuse)


def test_validate_remembers_its_answers_by_content(
    task_dir: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second validate of unchanged inputs runs no test; a changed solution runs again."""
    path = write(task_dir / "tasks.yaml", VALID)
    main(["tasks", "validate", str(path)])
    first = capsys.readouterr().out
    _nothing_may_run(monkeypatch)

    again = main(["tasks", "validate", str(path)]), capsys.readouterr().out
    (task_dir / "solutions" / "calc_service.py").write_text("def add(a, b):\n    return 0\n")
    with pytest.raises(AssertionError, match="a test run was started"):
        main(["tasks", "validate", str(path)])

    assert again == (0, first)


def test_validate_static_reads_the_list_and_runs_nothing(
    task_dir: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--static` turns the runs off: the list is read and checked, no test collected or run."""
    path = write(task_dir / "tasks.yaml", VALID)
    _nothing_may_run(monkeypatch)

    code = main(["tasks", "validate", str(path), "--static"])

    assert (code, capsys.readouterr().out) == (0, f"{path}: 1 task(s), all valid\n")


def test_a_typo_in_defaults_is_reported_once_at_its_own_line(task_dir: Path) -> None:
    """A bad default is one problem at the defaults' line, not one per task."""
    text = VALID.replace("max_attempts: 3", "max_attemps: 3") + VALID.split("tasks:\n")[1].replace(
        "id: calc", "id: calc2"
    ).replace("out/calc_service", "out/calc2_service")
    path = write(task_dir / "tasks.yaml", text)

    found = problems(path)

    assert found == [
        f"{path}:2: task list, field 'defaults.max_attemps': unknown key; "
        "did you mean 'max_attempts'?"
    ]


QUIXBUGS = """
defaults:
  type: service_port
  support: [conftest.py, pytest.ini, node.py, load_testdata.py]
tasks:
  - id: knapsack
    reference: python_programs/knapsack.py
    tests: python_testcases/test_knapsack.py
    output: fixed/knapsack.py
    support: json_testcases/knapsack.json
  - id: levenshtein
    reference: python_programs/levenshtein.py
    tests: python_testcases/test_levenshtein.py
    output: fixed/levenshtein.py
    support: [json_testcases/levenshtein.json]
"""


def test_support_lists_merge_with_defaults_on_a_quixbugs_shaped_list(tmp_path: Path) -> None:
    """Four shared support files in defaults plus one per task: each task gets all five,
    the shared ones first (support and examples are defaults ∪ task; other fields replace)."""
    shared = ["conftest.py", "pytest.ini", "node.py", "load_testdata.py"]
    for name in ("knapsack", "levenshtein"):
        write(tmp_path / f"python_programs/{name}.py", "def f():\n    pass\n")
        write(tmp_path / f"python_testcases/test_{name}.py", "def test_f():\n    pass\n")
        write(tmp_path / f"json_testcases/{name}.json", "[]\n")
    for name in shared:
        write(tmp_path / name, "\n")
    path = write(tmp_path / "tasks.yaml", QUIXBUGS)

    specs = load_tasks(path)

    assert [[p.relative_to(tmp_path.resolve()).as_posix() for p in s.support] for s in specs] == [
        [*shared, "json_testcases/knapsack.json"],
        [*shared, "json_testcases/levenshtein.json"],
    ]


def test_read_roots_let_inputs_come_from_a_named_folder_outside(task_dir: Path) -> None:
    """A reference outside the list's folder is read only when its folder is a read root."""
    write(task_dir / "shared" / "helpers.py", "X = 1\n")
    listed = task_dir / "lists"
    text = (
        VALID.replace("legacy/calc.py", "../shared/helpers.py")
        .replace("acceptance/", "../acceptance/")
        .replace("solutions/", "../solutions/")
    )
    path = write(listed / "tasks.yaml", text)

    with pytest.raises(TaskListError, match="add its folder to read_roots"):
        load_tasks(path)
    path.write_text(text + "read_roots: [../shared, ../acceptance, ../solutions]\n")
    [spec] = load_tasks(path)

    assert spec.reference == ((task_dir / "shared/helpers.py").resolve(),)


def test_a_missing_live_key_names_both_gemini_variables(
    task_dir: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a Gemini key, exit 2 names GEMINI_API_KEY and GOOGLE_API_KEY; nothing is made."""
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-used")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never the real API
    path = write(task_dir / "tasks.yaml", VALID)

    code = main(["run", str(path), "--run-dir", str(task_dir / "runs")])

    err = capsys.readouterr().err
    assert (code, "GEMINI_API_KEY" in err, "GOOGLE_API_KEY" in err) == (2, True, True)
    assert not (task_dir / "runs").exists()


def test_a_test_file_broken_after_a_valid_load_is_refused(task_dir: Path) -> None:
    """Checks remembered for a test file's text do not outlive the text: once the file no
    longer parses, loading the same list again refuses it."""
    path = write(task_dir / "tasks.yaml", VALID)
    load_tasks(path)
    write(task_dir / "acceptance" / "test_calc.py", "import calc_service\n\ndef test_add(:\n")

    [message] = problems(path)

    assert "is not valid Python (line 3: invalid syntax)" in message


def test_a_policy_allowance_for_a_task_not_in_the_list_is_an_error_at_its_line(
    task_dir: Path, capsys
) -> None:
    """`allowed_js_modules: {calc_jss: [fs]}` names no task: exit 2 naming file, line, fix."""
    path = write(task_dir / "tasks.yaml", VALID)
    policy = write(task_dir / "policy.yaml", "version: 1\nallowed_js_modules:\n  calc_jss: [fs]\n")

    code = main(["tasks", "validate", str(path), "--policy", str(policy)])

    err = capsys.readouterr().err
    assert (code, f"{policy} line 3: allowed_js_modules.calc_jss: no task with this id" in err) == (
        2,
        True,
    )


def test_a_missing_file_is_reported_in_the_same_pass_as_a_schema_error(task_dir: Path) -> None:
    """A task with a misspelt key and a reference that does not exist: both problems at
    once, not the missing file only after the key is fixed."""
    typo = "output: out/calc_service.py\n    outptu: x"
    text = VALID.replace("output: out/calc_service.py", typo)
    text = text.replace("legacy/calc.py", "legacy/gone.py")
    path = write(task_dir / "tasks.yaml", text)

    with pytest.raises(TaskListError) as info:
        load_tasks(path)

    assert sorted(p.field for p in info.value.problems) == ["outptu", "reference"]


def test_a_credential_file_named_as_an_input_shown_to_the_model_is_an_error(
    task_dir: Path,
) -> None:
    """`examples: [.envrc]` would put a credential file in a prompt: refused at its line by the
    one secret-file rule (context tools and the sandbox apply it too)."""
    write(task_dir / ".envrc", "export API_TOKEN=abc\n")
    path = write(
        task_dir / "tasks.yaml",
        VALID.replace("    solution:", "    examples: [.envrc]\n    solution:"),
    )

    with pytest.raises(TaskListError) as info:
        load_tasks(path)

    assert [(p.field, "credentials" in p.message) for p in info.value.problems] == [
        ("examples", True)
    ]
