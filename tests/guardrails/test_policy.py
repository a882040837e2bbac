"""Loading the guardrails policy: the shipped default, operator files, and clear errors."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from harness.guardrails import PolicyError, load_policy

REPO_POLICY = Path(__file__).resolve().parents[2] / "guardrails" / "policy.yaml"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(PolicyError) as info:
        load_policy(_write(tmp_path, text), task_list_dir=tmp_path)
    return str(info.value)


def test_shipped_file_and_packaged_default_are_identical() -> None:
    """guardrails/policy.yaml and the copy inside the package never drift apart."""
    shipped = resources.files("harness.data").joinpath("policy.yaml").read_text()

    assert REPO_POLICY.read_text() == shipped


def test_shipped_file_loads_like_the_default(tmp_path: Path) -> None:
    """Passing the shipped file explicitly behaves exactly like passing no policy."""
    explicit = load_policy(REPO_POLICY, task_list_dir=tmp_path)
    default = load_policy(None, task_list_dir=tmp_path)

    assert (explicit.commands, explicit.code, explicit.write_roots) == (
        default.commands,
        default.code,
        default.write_roots,
    )


def test_default_allows_only_the_task_list_folder(tmp_path: Path) -> None:
    """With no policy, the one write root is the task list's own folder."""
    assert load_policy(None, task_list_dir=tmp_path).write_roots == (tmp_path.resolve(),)


def test_sections_left_out_keep_the_shipped_defaults(tmp_path: Path) -> None:
    """An operator who only narrows write_roots keeps every shipped forbidden command."""
    policy = load_policy(_write(tmp_path, "write_roots: [out]\n"), task_list_dir=tmp_path)

    assert policy.write_roots == ((tmp_path / "out").resolve(),)
    assert policy.check_command("git push -f") is not None


def test_loading_is_logged_with_its_source(tmp_path: Path) -> None:
    """policy_loaded names the file and the resolved roots."""
    path = _write(tmp_path, "write_roots: [.]\n")
    with capture_logs() as logs:
        load_policy(path, task_list_dir=tmp_path)

    assert [(e["event"], e["source"], e["write_roots"]) for e in logs] == [
        ("policy_loaded", str(path), [str(tmp_path.resolve())])
    ]


def test_unknown_key_names_file_line_field_and_the_allowed_keys(tmp_path: Path) -> None:
    """A typo is an error with its line and the keys allowed there."""
    text = (
        "forbidden_commands:\n  - id: x\n    command: [git, push]\n    flagz: [-f]\n    reason: r\n"
    )

    assert _error(tmp_path, text) == (
        f"invalid guardrails policy:\n  {tmp_path / 'policy.yaml'} line 4: "
        "forbidden_commands[0].flagz: unknown key; fix the spelling or remove it "
        "(allowed here: id, command, flags, args, unless_flags, reason)"
    )


def test_every_problem_is_listed_with_its_line(tmp_path: Path) -> None:
    """Several problems are reported together, each with its own line."""
    text = (
        "versoin: 1\n"
        "forbidden_code_patterns:\n"
        "  - id: broken\n"
        "    pattern: '(unclosed'\n"
        "    reason: r\n"
        "forbidden_calls:\n"
        "  - {id: c, calls: [], reason: r}\n"
    )
    message = _error(tmp_path, text)

    assert "line 1: versoin: unknown key" in message
    assert "line 4: forbidden_code_patterns[0].pattern: not a valid regular expression" in message
    assert "line 7: forbidden_calls[0].calls: empty; give at least one entry" in message


def test_duplicate_rule_ids_point_at_the_second_one(tmp_path: Path) -> None:
    """Two rules with one id: the error names the line of the second."""
    text = (
        "forbidden_commands:\n"
        "  - {id: a, command: [git, push], reason: r}\n"
        "  - {id: a, command: [kubectl, apply], reason: r}\n"
    )

    assert "line 3: forbidden_commands[1].id: 'a' is used twice" in _error(tmp_path, text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("write_roots: [\n", "line 2: not valid YAML"),
        ("- a\n- b\n", "expected a mapping of policy sections"),
        ("write_roots: []\n", "write_roots: empty; give at least one entry"),
        ("version: 2\n", "version: Input should be 1"),
        (
            "forbidden_commands:\n  - {id: a, command: [git], flags: [force], reason: r}\n",
            "flags start with '-'",
        ),
        ("forbidden_commands:\n  - {id: Bad Id, command: [git], reason: r}\n", "line 2: "),
        ('write_roots: [out, "a\\0b"]\n', "line 1: write_roots: 'a\\x00b' is not a folder name"),
    ],
)
def test_invalid_files_are_policy_errors_saying_what_to_change(
    tmp_path: Path, text: str, expected: str
) -> None:
    """Syntax, shape and value errors all become PolicyError with a useful message."""
    assert expected in _error(tmp_path, text)


def test_a_missing_file_is_a_policy_error(tmp_path: Path) -> None:
    """A policy path that does not exist is reported, not a traceback."""
    with pytest.raises(PolicyError, match="cannot read guardrails policy"):
        load_policy(tmp_path / "nope.yaml", task_list_dir=tmp_path)


def test_subcommand_alternatives_may_be_lists_or_bars(tmp_path: Path) -> None:
    """`[a, b]` and `"a|b"` both mean either word."""
    text = (
        "forbidden_commands:\n"
        "  - {id: a, command: [docker, [push, rmi]], reason: r}\n"
        "  - {id: b, command: [docker, 'system|volume', prune], reason: r}\n"
    )
    policy = load_policy(_write(tmp_path, text), task_list_dir=tmp_path)

    assert [
        v.rule if v else None
        for v in map(policy.check_command, ["docker rmi x", "docker volume prune", "docker ps"])
    ] == ["a", "b", None]


TODAYS_JS_REFUSED = {
    "assert", "assert/strict", "test", "module", "child_process", "cluster", "worker_threads",
    "vm", "inspector", "inspector/promises", "v8", "repl", "process", "fs", "fs/promises",
    "wasi", "trace_events", "diagnostics_channel", "async_hooks",
}  # fmt: skip


def test_the_shipped_js_module_list_is_the_one_the_sandbox_refused_before(tmp_path: Path) -> None:
    """The default refuses exactly the node built-ins the pre-check's constant did, for
    every task: moving the list into the policy loosened nothing."""
    policy = load_policy(None, task_list_dir=tmp_path)

    assert policy.refused_js_modules("any-task") == TODAYS_JS_REFUSED


def test_a_task_allowed_a_module_loads_it_and_no_other_task_does(tmp_path: Path) -> None:
    """`allowed_js_modules` lifts a refused module (written with or without node:) for the
    named task only; the shipped refusal list stays in force beside it."""
    text = "allowed_js_modules:\n  config_loader: ['node:fs', fs/promises]\n"
    policy = load_policy(_write(tmp_path, text), task_list_dir=tmp_path)

    assert policy.refused_js_modules("config_loader") == TODAYS_JS_REFUSED - {"fs", "fs/promises"}
    assert policy.refused_js_modules("other") == TODAYS_JS_REFUSED


def test_allowing_a_module_that_is_not_refused_is_an_error_naming_it(tmp_path: Path) -> None:
    """An allowance for a module nobody refuses is a mistake the operator is told about."""
    message = _error(tmp_path, "allowed_js_modules:\n  t: [path]\n")

    assert "allowed_js_modules.t: path not in refused_js_modules" in message
    assert "remove it" in message


def test_an_operator_list_extends_the_shipped_one(tmp_path: Path) -> None:
    """`refused_js_modules: [punycode]` adds punycode; every shipped entry stays refused."""
    policy = load_policy(
        _write(tmp_path, "refused_js_modules: [punycode]\n"), task_list_dir=tmp_path
    )

    assert policy.refused_js_modules("t") == TODAYS_JS_REFUSED | {"punycode"}


def test_a_misspelt_module_is_an_error_with_its_line_and_the_shipped_list_stays(
    tmp_path: Path,
) -> None:
    """A typo (`child_proces`) is refused naming file, line and fix; it never drops `fs`."""
    path = _write(tmp_path, "version: 1\nrefused_js_modules: [child_proces]\n")
    with pytest.raises(PolicyError) as info:
        load_policy(path, task_list_dir=tmp_path)

    assert f"{path} line 2: refused_js_modules[0]: 'child_proces' is not a node built-in" in str(
        info.value
    )


def test_an_operator_rule_adds_to_the_shipped_commands(tmp_path: Path) -> None:
    """An operator's forbidden_commands entry forbids its command; git push -f stays forbidden."""
    text = "forbidden_commands:\n  - {id: no-docker-push, command: [docker, push], reason: CI}\n"
    policy = load_policy(_write(tmp_path, text), task_list_dir=tmp_path)

    assert [
        getattr(policy.check_command(c), "rule", None) for c in ("docker push x", "git push -f")
    ] == [
        "no-docker-push",
        "git-force-push",
    ]


def test_remove_shipped_drops_a_named_shipped_entry(tmp_path: Path) -> None:
    """`remove_shipped` is the one way to drop shipped entries: by id for rules, by name else."""
    text = "remove_shipped:\n  refused_js_modules: [process]\n  forbidden_commands: [git-clean]\n"
    policy = load_policy(_write(tmp_path, text), task_list_dir=tmp_path)

    assert (policy.refused_js_modules("t"), policy.check_command("git clean -fd")) == (
        TODAYS_JS_REFUSED - {"process"},
        None,
    )


def test_removing_what_is_not_shipped_is_an_error_with_its_line(tmp_path: Path) -> None:
    """A misspelt removal is refused (never silently ignored), naming the line and the fix."""
    message = _error(tmp_path, "remove_shipped:\n  forbidden_commands: [git-clen]\n")

    assert "line 2: remove_shipped.forbidden_commands: 'git-clen' is not a shipped entry" in message


def test_a_changed_shipped_rule_under_its_own_id_is_an_error(tmp_path: Path) -> None:
    """Redefining a shipped id would silently weaken it: the error says to remove it first."""
    text = (
        "forbidden_commands:\n  - {id: git-clean, command: [git, clean], flags: [-x], reason: r}\n"
    )
    message = _error(tmp_path, text)

    assert "line 2: forbidden_commands[0].id: 'git-clean' is a shipped rule" in message
    assert "remove_shipped" in message


GO_REFUSED = {"os", "flag", "unsafe", "reflect", "runtime", "syscall"}


def test_the_shipped_policy_refuses_the_go_packages_that_reach_the_test_binary(
    tmp_path: Path,
) -> None:
    """By default a Go candidate may not import what reaches the binary's flags, output or
    memory from init(): os, flag, unsafe, reflect, runtime, syscall."""
    policy = load_policy(None, task_list_dir=tmp_path)

    assert policy.refused_go_packages("any-task") == GO_REFUSED


def test_a_task_allowed_a_go_package_imports_it_and_no_other_task_does(tmp_path: Path) -> None:
    """`allowed_go_packages` lifts a refused package for the named task only."""
    policy = load_policy(
        _write(tmp_path, "allowed_go_packages:\n  cli: [os]\n"), task_list_dir=tmp_path
    )

    assert policy.refused_go_packages("cli") == GO_REFUSED - {"os"}
    assert policy.refused_go_packages("other") == GO_REFUSED


def test_allowing_a_go_package_that_is_not_refused_is_an_error_naming_it(tmp_path: Path) -> None:
    """An allowance for a package nobody refuses, or a name that is no import path, is told."""
    message = _error(tmp_path, "allowed_go_packages:\n  t: [strings]\n")
    bad_name = _error(tmp_path, "refused_go_packages: ['os exec']\n")

    assert "allowed_go_packages.t: strings not in refused_go_packages" in message
    assert "'os exec' is not a Go import path" in bad_name
