"""The language fields of a task list: language, test_command, results (and {results})."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import BadInput
from harness.runner import load_task_list
from harness.tasks import TaskListError, load_tasks
from tests.conftest import write

REPO = Path(__file__).resolve().parents[2]
GO_TASK = """
tasks:
  - id: calc
    reference: legacy/calc.py
    tests: calc/calc_test.go
    output: calc/calc.go
    language: go
"""


def problems(path: Path, **kwargs) -> list[str]:
    with pytest.raises(TaskListError) as info:
        load_tasks(path, **kwargs)
    return [str(p) for p in info.value.problems]


@pytest.fixture
def go_dir(task_dir: Path) -> Path:
    write(task_dir / "calc" / "calc_test.go", "package calc\n")
    write(task_dir / "go.mod", "module calc\n\ngo 1.19\n")
    return task_dir


def with_fields(text: str, *lines: str) -> str:
    return text.rstrip("\n") + "\n" + "".join(f"    {line}\n" for line in lines)


@pytest.mark.parametrize(
    ("example", "count", "language", "command"),
    [
        ("go_example", 4, "go", ("go", "test", "-json", "./...")),
        ("js_example", 3, "javascript", ("node", "--test", "--test-reporter=junit")),
    ],
)
def test_the_example_task_lists_load(example, count, language, command) -> None:
    """Both shipped cross-language examples validate, with the registry's defaults filled."""
    specs = load_task_list(REPO / "tasks" / example / "tasks.yaml")

    assert len(specs) == count
    assert {s.language for s in specs} == {language}
    assert {s.type for s in specs} == {"language_port"}
    assert all(s.test_command[: len(command)] == command for s in specs)
    assert all(s.solution is not None and s.solution.is_file() for s in specs)


def test_go_defaults_come_from_the_registry(go_dir: Path) -> None:
    """A Go task without test_command runs `go test -json ./...`, read as go-json."""
    [spec] = load_tasks(write(go_dir / "tasks.yaml", GO_TASK))

    assert (spec.language, spec.test_command, spec.results) == (
        "go",
        ("go", "test", "-json", "./..."),
        "go-json",
    )


def test_python_keeps_the_builtin_pytest_path(task_dir: Path) -> None:
    """A task with no language fields is what it always was: python, pytest, no command."""
    text = "tasks:\n  - {id: c, reference: legacy/calc.py, tests: acceptance/test_calc.py, "
    [spec] = load_tasks(write(task_dir / "tasks.yaml", text + "output: out/c_port.py}\n"))

    assert (spec.language, spec.test_command, spec.results) == ("python", (), "pytest")


def test_a_command_string_is_split_like_shell_words(go_dir: Path) -> None:
    """`test_command: "go test -run 'A B' ./..."` becomes four argv items, quotes honoured."""
    path = write(
        go_dir / "tasks.yaml",
        with_fields(GO_TASK, "test_command: \"go test -json -run 'A B' ./...\""),
    )

    [spec] = load_tasks(path)

    assert spec.test_command == ("go", "test", "-json", "-run", "A B", "./...")


def test_unknown_language_is_located_and_lists_the_known(go_dir: Path) -> None:
    """A misspelt language names file, line, task and field, and the known languages."""
    path = write(go_dir / "tasks.yaml", GO_TASK.replace("language: go", "language: golang"))

    [message] = problems(path)

    assert message.startswith(f"{path}:6: task 'calc', field 'language': unknown language")
    assert "known languages: go, java, javascript, python, rust, typescript" in message


def test_output_suffix_must_fit_the_language(go_dir: Path) -> None:
    """A Go task writing a .py file is told to rename it or fix language:."""
    path = write(
        go_dir / "tasks.yaml", GO_TASK.replace("output: calc/calc.go", "output: calc/calc.py")
    )

    [message] = problems(path)

    assert message == (
        f"{path}:5: task 'calc', field 'output': 'calc/calc.py' does not fit language go (its "
        "files end in .go); rename it, e.g. calc.go, or fix language:"
    )


@pytest.mark.parametrize(
    "command",
    [
        '"go test ./... | tee log"',
        '"go test ./... && echo ok"',
        '"go vet; go test"',
        '"go test $(ls)"',
    ],
)
def test_shell_syntax_in_a_command_string_is_an_error(go_dir: Path, command: str) -> None:
    """Pipes, chains and substitutions would need a shell, which never runs the tests."""
    path = write(go_dir / "tasks.yaml", with_fields(GO_TASK, f"test_command: {command}"))

    [message] = problems(path)

    assert f"{path}:7: task 'calc', field 'test_command'" in message
    assert "give an argv list, or put the pipeline in a script listed in support:" in message


def test_unknown_placeholder_and_embedded_tests_are_errors(go_dir: Path) -> None:
    """Only {tests}, {output} and {results} expand, and {tests} is an argv item of its own."""
    path = write(
        go_dir / "tasks.yaml",
        with_fields(GO_TASK, 'test_command: [go, test, "{test}", "x={tests}"]'),
    )

    found = problems(path)

    assert any(
        "unknown placeholder {test} in '{test}'; known: {tests}, {output}, {results}" in p
        for p in found
    )
    assert any("'x={tests}': {tests} expands to one argv item per test file" in p for p in found)


def test_pytest_results_need_python_without_a_command(go_dir: Path) -> None:
    """results: pytest is the built-in runner; with Go it is an error naming the fix."""
    path = write(go_dir / "tasks.yaml", with_fields(GO_TASK, "results: pytest"))

    [message] = problems(path)

    assert message.endswith(
        "field 'results': pytest is the built-in runner for Python with no test_command; with "
        "language go use junit (a JUnit report written to {results}) or go-json (go test -json "
        "on stdout)"
    )


JUNIT_FIX = (
    "put {results} where the command names its report file, e.g. --junitxml={results} (pytest) "
    "or --test-reporter-destination={results} (node --test)"
)


def test_a_junit_command_that_names_results_validates(go_dir: Path) -> None:
    """results: junit with {results} in the command loads; the placeholder is kept for the run."""
    path = write(
        go_dir / "tasks.yaml",
        with_fields(GO_TASK, "results: junit", 'test_command: [go, run, ./r, "-o={results}"]'),
    )

    [spec] = load_tasks(path)

    assert (spec.results, spec.test_command[-1]) == ("junit", "-o={results}")


def test_a_junit_command_must_name_results(go_dir: Path) -> None:
    """A junit command that never writes to {results} reads no report: the error names the fix."""
    path = write(
        go_dir / "tasks.yaml",
        with_fields(GO_TASK, "results: junit", "test_command: [go, run, ./r, -o=r.xml]"),
    )

    [message] = problems(path)

    assert message.startswith(
        f"{path}:8: task 'calc', field 'test_command': never names {{results}}"
    )
    assert message.endswith(JUNIT_FIX)


def test_a_python_command_is_read_as_junit_so_must_name_results(task_dir: Path) -> None:
    """A Python task's own test_command is read as junit, so it too must name {results}."""
    text = (
        "tasks:\n  - id: c\n    reference: legacy/calc.py\n    tests: acceptance/test_calc.py\n"
        "    output: out/c_port.py\n    test_command: [python, -m, pytest, --junitxml=r.xml]\n"
    )

    [message] = problems(write(task_dir / "tasks.yaml", text))
    [spec] = load_tasks(
        write(task_dir / "tasks.yaml", text.replace("--junitxml=r.xml", '"--junitxml={results}"'))
    )

    assert message.endswith(JUNIT_FIX)
    assert (spec.results, spec.test_command[-1]) == ("junit", "--junitxml={results}")


def test_results_placeholder_needs_junit(go_dir: Path) -> None:
    """{results} in a go-json command is a report nobody reads: remove it or say junit."""
    path = write(
        go_dir / "tasks.yaml",
        with_fields(GO_TASK, 'test_command: [go, test, -json, "-o={results}", ./...]'),
    )

    [message] = problems(path)

    assert message == (
        f"{path}:7: task 'calc', field 'test_command': names {{results}}, the JUnit report's "
        "destination, but results: go-json reads no report; remove {results} from the "
        "command, or set results: junit"
    )


RETIRED = (
    "is not used: the harness hands the test command a private pipe as {results}, which only "
    "the harness reads (so candidate code cannot rewrite the report); remove results_path: and "
    "put {results} where the command names its report file"
)


def test_results_path_is_refused_with_what_replaced_it(go_dir: Path) -> None:
    """An old task list's results_path: is located and told to use {results} instead."""
    text = with_fields(
        GO_TASK,
        "results: junit",
        'test_command: [go, run, ./r, "{results}"]',
        "results_path: r.xml",
    )

    [message] = problems(write(go_dir / "tasks.yaml", text))

    assert message.startswith(
        f"{go_dir / 'tasks.yaml'}:9: task 'calc', field 'results_path': {RETIRED}"
    )


def test_a_defaulted_results_path_is_refused_once_at_its_line(go_dir: Path) -> None:
    """results_path: under defaults: is one problem at the defaults line, not one per task."""
    text = "defaults:\n  results_path: test-results.xml\n" + GO_TASK.split("\n", 1)[1]

    [message] = problems(write(go_dir / "tasks.yaml", text))

    assert message.startswith(
        f"{go_dir / 'tasks.yaml'}:2: task list, field 'defaults.results_path': {RETIRED}"
    )


def test_unknown_results_format_lists_the_known(go_dir: Path) -> None:
    """results: tap is not read by anything; the error lists the formats."""
    [message] = problems(write(go_dir / "tasks.yaml", with_fields(GO_TASK, "results: tap")))

    assert message.endswith(
        "field 'results': unknown format 'tap'; use one of pytest, junit, go-json"
    )


def test_typescript_without_a_command_says_to_give_one(task_dir: Path) -> None:
    """A language with no default runner needs test_command, with an example."""
    write(task_dir / "t" / "a.test.ts", "import { a } from './a';\n")
    text = (
        "tasks:\n  - {id: a, reference: legacy/calc.py, tests: t/a.test.ts, output: t/a.ts, "
        "language: typescript}\n"
    )

    [message] = problems(write(task_dir / "tasks.yaml", text))

    assert "field 'test_command': TypeScript has no default test command; give one" in message


def test_a_defaulted_bad_command_is_reported_once_at_its_default(go_dir: Path) -> None:
    """A shell pipeline in defaults: is one problem at the defaults line, not one per task."""
    text = "defaults:\n  language: go\n  test_command: go test | cat\n" + GO_TASK.split("\n", 1)[
        1
    ].replace("    language: go\n", "")
    text += (
        "  - {id: two, reference: legacy/calc.py, tests: calc/calc_test.go, output: calc/two.go}\n"
    )

    [message] = problems(write(go_dir / "tasks.yaml", text))

    assert message.startswith(
        f"{go_dir / 'tasks.yaml'}:3: task list, field 'defaults.test_command'"
    )


def test_the_command_policy_checks_test_command_at_load(go_dir: Path) -> None:
    """A forbidden test command is bad input before anything runs, naming the rule's reason."""
    path = write(go_dir / "tasks.yaml", with_fields(GO_TASK, "test_command: [git, push, --force]"))

    with pytest.raises(BadInput) as info:
        load_task_list(path)

    assert f"{path}:7: task 'calc', field 'test_command': the guardrails policy forbids it" in str(
        info.value
    )
    assert "force push" in str(info.value)


def test_a_results_format_the_default_command_does_not_write_is_an_error(go_dir: Path) -> None:
    """results: junit with Go's default `go test -json` would read a report nobody writes."""
    path = write(go_dir / "tasks.yaml", with_fields(GO_TASK, "results: junit"))

    [message] = problems(path)

    assert message.endswith(
        "field 'results': junit is not what the default command (go test -json ./...) "
        "produces; give the test_command: that writes it, or remove results:"
    )
