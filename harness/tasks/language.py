"""The language fields of a task: `language:`, `test_command:`, `results:`.

Each is checked against the language registry (harness/data/languages.yaml, through
harness.extract) and filled from it when omitted. A test command is an argv list or a string
split like a shell would split words, but never run by a shell: shell syntax in it is an error.
A `junit` command writes its report to `{results}`: the test runner makes that a private pipe
only the harness reads (harness/testrun/foreign.py), so no report file is ever named.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.extract import RESULT_FORMATS, Language, language_named

__all__ = ["PLACEHOLDERS", "Runner", "check_runner"]

# What the test runner expands inside test_command: the test paths (each its own argv item),
# the candidate's path (both relative to the scratch directory) and the report's destination.
PLACEHOLDERS = ("tests", "output", "results")
Say = Callable[[str, str], None]  # (field, message)
CommandCheck = Callable[[Sequence[str]], str | None]  # why the policy forbids it, or None

_SHELL_WORDS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1", "&>"})
_SHELL_TEXT = re.compile(r"\|\||&&|[|;`]|\$\(|\$\{|(?<![\w-])[<>]|[<>](?![\w-])")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_SCRIPT_FIX = (
    "the command is run without a shell: give an argv list, or put the pipeline in a script "
    "listed in support: and run that"
)


@dataclass(frozen=True)
class Runner:
    """How a task's tests run, validated and with the registry's defaults filled in."""

    language: str
    test_command: tuple[str, ...]
    results: str


def check_runner(model: Any, say: Say, check_command: CommandCheck | None) -> Runner | None:
    """The task's runner fields, or None after `say`ing every problem with its fix."""
    try:
        language = language_named(model.language)
    except LookupError as exc:
        say("language", str(exc))
        return None
    problems: list[tuple[str, str]] = []

    def note(name: str, message: str) -> None:
        problems.append((name, message))

    command = _command(model.test_command, language, note)
    results = model.results or (language.results if not model.test_command else _results(language))
    _check_results(results, language, model, note)
    mismatch = results in RESULT_FORMATS and results not in ("pytest", language.results)
    if model.test_command is None and mismatch:
        default = " ".join(language.test_command or ()) or "built-in pytest"
        note(
            "results",
            f"{results} is not what the default command ({default}) produces; give the "
            "test_command: that writes it, or remove results:",
        )
    elif results in RESULT_FORMATS and results != "pytest":  # pytest: _check_results
        _check_report_target(command, results, note)
    if command and not problems and check_command is not None and (why := check_command(command)):
        note("test_command", f"the guardrails policy forbids it: {why}")
    for name, message in problems:
        say(name, message)
    return None if problems else Runner(language.name, command, results)


def _results(language: Language) -> str:
    """With a test command of its own a task reads a report, never the built-in pytest path."""
    return language.results if language.results != "pytest" else "junit"


def _command(value: Any, language: Language, say: Say) -> tuple[str, ...]:
    if value is None:
        if language.test_command is None and not language.is_python:
            say(
                "test_command",
                f"{language.title} has no default test command; give one as an argv list, "
                'e.g. test_command: [npx, --no-install, jest, "{tests}"]',
            )
        return language.test_command or ()
    if isinstance(value, str):
        if _SHELL_TEXT.search(value):
            message = f"{value!r} has shell syntax (|, &&, ;, $(...), redirection); "
            say("test_command", message + _SCRIPT_FIX)
            return ()
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            say("test_command", f"cannot be split into words ({exc}); give an argv list")
            return ()
    elif isinstance(value, list) and all(isinstance(w, str) and w for w in value):
        argv = list(value)
    else:
        say("test_command", "expected an argv list of non-empty strings, or a command string")
        return ()
    if not argv:
        say("test_command", "is empty; give the command that runs the tests")
        return ()
    if shell := [w for w in argv if w in _SHELL_WORDS]:
        say("test_command", f"{shell[0]!r} is shell syntax; " + _SCRIPT_FIX)
    _check_placeholders(argv, say)
    return tuple(argv)


def _check_placeholders(argv: list[str], say: Say) -> None:
    for word in argv:
        for name in _PLACEHOLDER.findall(word):
            if name not in PLACEHOLDERS:
                known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                say("test_command", f"unknown placeholder {{{name}}} in {word!r}; known: {known}")
            elif name == "tests" and word != "{tests}":
                say(
                    "test_command",
                    f"{word!r}: {{tests}} expands to one argv item per test file, so it must be "
                    "an item of its own",
                )


def _check_results(results: str, language: Language, model: Any, say: Say) -> None:
    if results not in RESULT_FORMATS:
        say("results", f"unknown format {results!r}; use one of {', '.join(RESULT_FORMATS)}")
    elif results == "pytest" and (not language.is_python or model.test_command is not None):
        why = "a test_command" if language.is_python else f"language {language.name}"
        say(
            "results",
            f"pytest is the built-in runner for Python with no test_command; with {why} use "
            "junit (a JUnit report written to {results}) or go-json (go test -json on stdout)",
        )


def _check_report_target(command: tuple[str, ...], results: str, say: Say) -> None:
    """A junit command must write to {results}; nothing else may name it."""
    named = any("{results}" in word for word in command)
    if results == "junit" and command and not named:
        say(
            "test_command",
            "never names {results}, but results: junit reads the JUnit report from there (a "
            "private pipe only the harness reads); put {results} where the command names its "
            "report file, e.g. --junitxml={results} (pytest) or "
            "--test-reporter-destination={results} (node --test)",
        )
    elif results != "junit" and named:
        say(
            "test_command",
            f"names {{results}}, the JUnit report's destination, but results: {results} reads "
            "no report; remove {results} from the command, or set results: junit",
        )
