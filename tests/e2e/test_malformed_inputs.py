"""Malformed input of every class exits 2 through the real CLI, saying where and what to change,
before anything is created, spent or changed."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness import providers
from harness.budget import SqliteLedger
from harness.cli import main
from harness.sim.provider import SimProvider

VALID = """\
defaults:
  max_attempts: 3
tasks:
  - id: calc
    reference: legacy/calc.py
    tests: acceptance/test_calc.py
    output: out/calc_service.py
    solution: solutions/calc_service.py
"""
SECOND = """\
  - id: other
    reference: legacy/other.py
    tests: acceptance/test_calc.py
    output: out/other_service.py
"""
FIFO, DIR = "<fifo>", "<dir>"
UNCOLLECTABLE = (
    "from calc_service import add\nimport not_installed_anywhere\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n"
)
READS_DATA = (  # a QuixBugs-style suite: its cases are read by the function's name
    "from pathlib import Path\n\nfrom calc_service import add\n"
    "CASES = (Path(__file__).parent / f'{add.__name__}.json').read_text()\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n"
)


def sparse(size: int) -> tuple[str, int]:
    return ("<sparse>", size)


def link(target: str) -> tuple[str, str]:
    return ("<link>", target)


@dataclass(frozen=True)
class Case:
    """One malformed input: what to write, the flags, and what the message must say."""

    name: str
    where: str  # e.g. "tasks.yaml:5:" (file and line), found in the message
    fix: str  # what to change, found in the message
    tasks: str = VALID
    files: dict[str, object] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    tasks_path: str = "tasks.yaml"
    validate: bool = True  # also through `harness tasks validate`


def sub(old: str, new: str, text: str = VALID) -> str:
    assert old in text
    return text.replace(old, new)


DEEP = "tasks: " + "[" * 5000 + "]" * 5000 + "\n"
LAUGHS = 'a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]\n' + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)
)
CFG = ("--config", "harness.yaml")
ROUTE = "routes:\n  mid: {provider: anthropic, model: claude-sonnet-5-5, max_tokens: %s}\n"
POL = ("--policy", "policy.yaml")
PRICES = (
    b"checked: 2026-11-21\nmodels:\n  m: {provider: anthropic, input: '3',\n"
    b"      output: '%s', cache_write: '3.75', cache_read: '0.3'}\n"
)

TASK_LIST = [
    Case(
        "id_like_a_flag",
        "tasks.yaml:4:",
        "would be read as a flag",
        tasks=sub("id: calc", "id: -rf"),
    ),
    Case(
        "hidden_is_visible",
        "tasks.yaml:9:",
        "is also in tests:",
        tasks=VALID + "    hidden_tests: acceptance/test_calc.py\n",
    ),
    # encodings, syntax, shape
    Case(
        "latin1",
        "tasks.yaml:5:",
        "save the file as UTF-8",
        files={"tasks.yaml": sub("calc.py", "calc\xe9.py").encode("latin-1")},
    ),
    Case("utf16", "tasks.yaml:1:", "not UTF-8", files={"tasks.yaml": VALID.encode("utf-16")}),
    Case(
        "nul_char",
        "tasks.yaml:5:",
        "control characters",
        tasks=sub("legacy/calc.py", '"legacy/\x00calc.py"'),
    ),
    Case("deep_5000", "tasks.yaml:1:", "nests deeper than 32 levels", tasks=DEEP),
    Case("deep_100000", "tasks.yaml:1:", "flatten it", tasks="tasks: " + "[" * 100_000),
    Case("billion_laughs", "tasks.yaml:", "write it out plainly", tasks=LAUGHS),
    Case(
        "unclosed",
        "tasks.yaml:6:",
        "flow sequence started on line 5",
        tasks=sub("legacy/calc.py", "[legacy/calc.py"),
    ),
    Case("tab", "tasks.yaml:6:", "indent with spaces", tasks=sub("    tests:", "\ttests:")),
    Case("two_documents", "tasks.yaml:9:", "single document", tasks=VALID + "---\ntasks: []\n"),
    Case(
        "python_tag",
        "tasks.yaml:8:",
        "constructor",
        tasks=sub("solutions/calc_service.py", "!!python/object:os.system x"),
    ),
    Case("int_digits", "tasks.yaml:2:", "cannot be read", tasks=sub("3", "9" * 5000)),
    Case("empty", "tasks.yaml:1:", "add a 'tasks:' list", tasks=""),
    Case(
        "top_list", "tasks.yaml:1:", "expected a mapping with a 'tasks:' list", tasks="- id: calc\n"
    ),
    Case(
        "second_tasks",
        "tasks.yaml:9:",
        "duplicate key 'tasks' (first on line 3)",
        tasks=VALID + "tasks: []\n",
    ),
    Case(
        "dup_key_in_task",
        "tasks.yaml:9: task 'calc', field 'output'",
        "duplicate key",
        tasks=VALID + "    output: out/x.py\n",
    ),
    Case("fifty_mb", "tasks.yaml", "bigger than 8 MiB", files={"tasks.yaml": sparse(50 * 2**20)}),
    Case("list_is_dir", "lists", "is a directory", files={"lists": DIR}, tasks_path="lists"),
    Case("list_is_fifo", "pipe.yaml", "FIFO", files={"pipe.yaml": FIFO}, tasks_path="pipe.yaml"),
    Case("list_missing", "nope.yaml", "does not exist", tasks_path="nope.yaml"),
    # schema
    Case(
        "key_typo",
        "tasks.yaml:9: task 'calc', field 'refrence'",
        "did you mean 'reference'?",
        tasks=VALID + "    refrence: x\n",
    ),
    Case(
        "defaults_typo",
        "tasks.yaml:2: task list, field 'defaults.max_attempt'",
        "did you mean 'max_attempts'?",
        tasks=sub("max_attempts", "max_attempt", VALID + SECOND),
    ),
    Case(
        "top_level_typo",
        "tasks.yaml:9: task list, field 'taks'",
        "did you mean 'tasks'?",
        tasks=VALID + "taks: []\n",
    ),
    Case(
        "id_in_defaults",
        "tasks.yaml:3: task list, field 'defaults.id'",
        "each task needs its own",
        tasks=sub("  max_attempts: 3\n", "  max_attempts: 3\n  id: x\n"),
    ),
    Case(
        "id_space",
        "tasks.yaml:4: task 'my calc', field 'id'",
        "letters, digits, - and _",
        tasks=sub("id: calc", "id: my calc"),
    ),
    Case(
        "id_long",
        "tasks.yaml:4:",
        "longer than 64 characters",
        tasks=sub("id: calc", "id: " + "c" * 300),
    ),
    Case(
        "id_number",
        "tasks.yaml:4: task '123', field 'id'",
        "put it in quotes",
        tasks=sub("id: calc", "id: 123"),
    ),
    Case(
        "dup_id",
        "tasks.yaml:9: task 'calc', field 'id'",
        "duplicate id (first used on line 4)",
        tasks=VALID + SECOND.replace("other", "calc", 1),
        files={"legacy/other.py": b"x = 1\n"},
    ),
    Case(
        "case_dup_id",
        "tasks.yaml:9: task 'Calc', field 'id'",
        "only in case",
        tasks=VALID + SECOND.replace("id: other", "id: Calc"),
        files={"legacy/other.py": b"x = 1\n"},
    ),
    Case("attempts_inf", "tasks.yaml:2:", "expected a whole number", tasks=sub("3", ".inf")),
    Case(
        "attempts_true",
        "tasks.yaml:9: task 'calc', field 'max_attempts'",
        "expected a whole number",
        tasks=VALID + "    max_attempts: true\n",
    ),
    Case("attempts_1e400", "tasks.yaml:2:", "expected a whole number", tasks=sub("3", "1e400")),
    Case("attempts_float", "tasks.yaml:2:", "expected a whole number", tasks=sub("3", "1.0e+20")),
    Case(
        "attempts_big", "tasks.yaml:2:", "between 1 and 50", tasks=sub("3", "100000000000000000000")
    ),
    Case(
        "missing_reference",
        "tasks.yaml:4: task 'calc', field 'reference'",
        "required field is missing; add it",
        tasks=sub("    reference: legacy/calc.py\n", ""),
    ),
    Case(
        "task_not_mapping",
        "tasks.yaml:9: task '#2'",
        "must be a mapping",
        tasks=VALID + "  - calc\n",
    ),
    Case(
        "reference_int",
        "tasks.yaml:5:",
        "item 1: expected text",
        tasks=sub("legacy/calc.py", "[5]"),
    ),
    # reads: missing, special, confined, encoded, sized
    Case(
        "reference_missing",
        "tasks.yaml:5: task 'calc', field 'reference'",
        "does not exist",
        tasks=sub("calc.py", "nope.py"),
    ),
    Case(
        "reference_dir",
        "tasks.yaml:5:",
        "is a directory; name the file(s) in it",
        tasks=sub("legacy/calc.py", "legacy"),
    ),
    Case(
        "reference_fifo",
        "tasks.yaml:5:",
        "is a FIFO (named pipe), not a regular file",
        tasks=sub("legacy/calc.py", "legacy/pipe.py"),
        files={"legacy/pipe.py": FIFO},
    ),
    Case(
        "reference_absolute",
        "tasks.yaml:5:",
        "add its folder to read_roots:",
        tasks=sub("legacy/calc.py", "/etc/passwd"),
    ),
    Case(
        "reference_dotdot",
        "tasks.yaml:5:",
        "outside the task list's folder",
        tasks=sub("legacy/calc.py", "../outside.py"),
        files={"../outside.py": b"SECRET = 1\n"},
    ),
    Case(
        "reference_symlink_out",
        "tasks.yaml:5:",
        "outside the task list's folder",
        tasks=sub("legacy/calc.py", "legacy/sneaky.py"),
        files={"../outside.py": b"SECRET = 1\n", "legacy/sneaky.py": link("../../outside.py")},
    ),
    Case(
        "reference_nul_path",
        "tasks.yaml:5:",
        "cannot be resolved",
        tasks=sub("legacy/calc.py", '"legacy/\\0calc.py"'),
    ),
    Case(
        "reference_symlink_loop",
        "tasks.yaml:5:",
        "fix the path",
        tasks=sub("legacy/calc.py", "legacy/loop.py"),
        files={"legacy/loop.py": link("loop.py")},
    ),
    Case(
        "tests_not_utf8",
        "tasks.yaml:6:",
        "is not UTF-8 text (line 2); save it as UTF-8",
        files={"acceptance/test_calc.py": b"import calc_service\n# caf\xe9\n"},
    ),
    Case(
        "tests_syntax",
        "tasks.yaml:6: task 'calc', field 'tests'",
        "is not valid Python (line 3: invalid syntax); fix the test file",
        files={"acceptance/test_calc.py": b"import calc_service\n\ndef test_add(:\n    pass\n"},
    ),
    Case(
        "tests_hypothesis",
        "tasks.yaml:6: task 'calc', field 'tests'",
        "imports hypothesis (line 2): candidate code could steer it",
        tasks=sub("    solution:", "    isolation: in_process\n    solution:"),
        files={"acceptance/test_calc.py": b"import calc_service\nfrom hypothesis import given\n"},
    ),
    Case(
        "tests_indentation",
        "tasks.yaml:6:",
        "is not valid Python (line 3: unindent does not match",
        files={"acceptance/test_calc.py": b"def test_a():\n        x = 1\n    y = 2\n"},
    ),
    Case(
        "tests_nul_byte",
        "tasks.yaml:6:",
        "is not valid Python (source code string cannot contain null bytes)",
        files={"acceptance/test_calc.py": b"x = 1\x00\n"},
    ),
    Case(
        "support_conftest_syntax",
        "tasks.yaml:9: task 'calc', field 'support'",
        "'conftest.py' is not valid Python (line 2: expected ':')",
        tasks=VALID + "    support: [conftest.py]\n",
        files={"conftest.py": b"import pytest\nif True\n"},
    ),
    Case(
        "reference_huge",
        "tasks.yaml:5:",
        "files shown to the model are at most 1 MiB",
        files={"legacy/calc.py": sparse(3 * 2**20)},
    ),
    Case(
        "support_fifo",
        "tasks.yaml:9:",
        "a support folder may hold only files and folders",
        tasks=VALID + "    support: [fixtures/]\n",
        files={"fixtures/data.txt": b"1\n", "fixtures/pipe": FIFO},
    ),
    Case(
        "support_escapes",
        "tasks.yaml:9:",
        "outside the task list's folder",
        tasks=VALID + "    support: [fixtures/]\n",
        files={"fixtures/up": link("../..")},
    ),
    Case(
        "support_missing",
        "tasks.yaml:3: task list, field 'defaults.support'",
        "does not exist",
        tasks=sub(
            "  max_attempts: 3\n", "  max_attempts: 3\n  support: [conftest.py]\n", VALID + SECOND
        ),
        files={"legacy/other.py": b"x = 1\n"},
    ),
    Case(
        "read_root_missing",
        "tasks.yaml:9: task list, field 'read_roots'",
        "is not a folder",
        tasks=VALID + "read_roots: [../shared]\n",
    ),
    # outputs: aliases, names, special files, roots
    Case(
        "output_is_reference",
        "tasks.yaml:7: task 'calc', field 'output'",
        "is also this task's reference",
        tasks=sub("out/calc_service.py", "legacy/calc.py"),
    ),
    Case(
        "output_is_test",
        "tasks.yaml:7:",
        "is also this task's tests",
        tasks=sub("out/calc_service.py", "acceptance/test_calc.py"),
    ),
    Case(
        "output_is_support",
        "tasks.yaml:7:",
        "is also this task's support",
        tasks=sub("out/calc_service.py", "conftest.py", VALID + "    support: [conftest.py]\n"),
        files={"conftest.py": b"\n"},
    ),
    Case(
        "output_is_other_input",
        "tasks.yaml:12: task 'other', field 'output'",
        "task 'calc''s reference",
        tasks=VALID + SECOND.replace("out/other_service.py", "legacy/calc.py"),
        files={"legacy/other.py": b"x = 1\n"},
    ),
    Case(
        "output_json",
        "tasks.yaml:7:",
        "rename it, e.g. json_port.py",
        tasks=sub("out/calc_service.py", "out/json.py"),
    ),
    Case(
        "output_conftest",
        "tasks.yaml:7:",
        "that Python or pytest itself imports",
        tasks=sub("out/calc_service.py", "out/conftest.py"),
    ),
    Case(
        "output_keyword",
        "tasks.yaml:7:",
        "valid module name",
        tasks=sub("out/calc_service.py", "out/class.py"),
    ),
    Case(
        "output_txt",
        "tasks.yaml:7:",
        "must be a .py file",
        tasks=sub("out/calc_service.py", "out/calc_service.txt"),
    ),
    Case(
        "output_dir",
        "tasks.yaml:7:",
        "is a directory; name the .py file to write",
        files={"out/calc_service.py": DIR},
    ),
    Case(
        "output_fifo",
        "tasks.yaml:7:",
        "the harness writes a regular file there",
        files={"out/calc_service.py": FIFO},
    ),
    Case(
        "output_under_file",
        "tasks.yaml:7:",
        "is a file, not a folder",
        tasks=sub("out/calc_service.py", "legacy/calc.py/calc_service.py"),
    ),
    Case(
        "output_outside_roots",
        "tasks.yaml:7: task 'calc', field 'output'",
        "outside every write root",
        tasks=sub("out/calc_service.py", "/tmp/elsewhere/calc_service.py"),
    ),
    Case(
        "output_twice",
        "tasks.yaml:12:",
        "same output as task 'calc'",
        tasks=VALID + SECOND.replace("out/other_service.py", "out/calc_service.py"),
        files={"legacy/other.py": b"x = 1\n"},
    ),
    Case(
        "output_inside_other_output",
        "tasks.yaml:12: task 'other', field 'output'",
        "which task 'calc' writes as a file",
        tasks=VALID
        + SECOND.replace("out/other_service.py", "out/calc_service.py/other_service.py"),
        files={"legacy/other.py": b"x = 1\n"},
    ),
    Case(
        "output_around_later_output",
        "tasks.yaml:7: task 'calc', field 'output'",
        "other_service.py, which task 'other' writes as a file",
        tasks=sub("out/calc_service.py", "out/other_service.py/calc_service.py", VALID + SECOND),
        files={"legacy/other.py": b"x = 1\n"},
    ),
    Case(
        "output_twice_but_case",
        "tasks.yaml:12: task 'other', field 'output'",
        "only in case; on a case-insensitive disk (macOS, Windows) both are one file",
        tasks=VALID + SECOND.replace("out/other_service.py", "out/Calc_service.py"),
        files={"legacy/other.py": b"x = 1\n"},
    ),
    Case(
        "output_test_basename",
        "tasks.yaml:7:",
        "same basename as test file",
        tasks=sub("out/calc_service.py", "out/test_calc.py"),
    ),
    Case(
        "language_unknown",
        "tasks.yaml:9: task 'calc', field 'language'",
        "known languages: go, java, javascript, python, rust, typescript",
        tasks=VALID + "    language: kotlin\n",
    ),
    Case(
        "language_suffix_mismatch",
        "tasks.yaml:7: task 'calc', field 'output'",
        "does not fit language go (its files end in .go); rename it, e.g. calc_service.go",
        tasks=VALID + "    language: go\n",
    ),
    Case(
        "test_command_shell_pipeline",
        "tasks.yaml:9: task 'calc', field 'test_command'",
        "put the pipeline in a script listed in support:",
        tasks=VALID + "    test_command: pytest -q | tee log\n",
    ),
    Case(
        "test_command_unknown_placeholder",
        "tasks.yaml:9: task 'calc', field 'test_command'",
        "unknown placeholder {test}",
        tasks=VALID + '    test_command: [pytest, "{test}", "--junitxml={results}"]\n',
    ),
    Case(
        "test_command_forbidden",
        "tasks.yaml:9: task 'calc', field 'test_command'",
        "the guardrails policy forbids it",
        tasks=VALID + '    test_command: [git, push, --force, "{results}"]\n',
    ),
    Case(
        "results_unknown",
        "tasks.yaml:9: task 'calc', field 'results'",
        "use one of pytest, junit, go-json",
        tasks=VALID + "    results: xunit\n",
    ),
    Case(
        "results_path_retired",
        "tasks.yaml:11: task 'calc', field 'results_path'",
        "is not used: the harness hands the test command a private pipe as {results}",
        tasks=VALID
        + '    test_command: [pytest, "--junitxml={results}"]\n    results: junit\n'
        + "    results_path: r.xml\n",
    ),
    Case(
        "junit_command_without_results",
        "tasks.yaml:9: task 'calc', field 'test_command'",
        "put {results} where the command names its report file, e.g. --junitxml={results}",
        tasks=VALID + "    test_command: [pytest, --junitxml=r.xml]\n",
    ),
    # tests that cannot be collected against a stub candidate: a missing library, a syntax
    # error, a data file read at collection that is not there (nothing is spent on them)
    Case(
        "tests_import_a_missing_library",
        "acceptance/test_calc.py:2:",
        "No module named 'not_installed_anywhere'",
        files={"acceptance/test_calc.py": UNCOLLECTABLE},
    ),
    Case(
        "tests_read_missing_data_at_collection",
        "acceptance/test_calc.py:4:",
        "cannot be collected: FileNotFoundError",
        tasks=VALID + "    isolation: in_process\n",
        files={"acceptance/test_calc.py": READS_DATA},
    ),
]
CONFIG = [
    Case(
        "budget_1e400",
        "harness.yaml:1: budget.overnight_cap_usd",
        "more than 1,000,000 USD",
        files={"harness.yaml": b"budget: {overnight_cap_usd: 1e400}\n"},
        args=CFG,
    ),
    Case(
        "budget_inf",
        "harness.yaml:1: budget.daily_cap_usd",
        "finite number",
        files={"harness.yaml": b"budget: {daily_cap_usd: .inf}\n"},
        args=CFG,
    ),
    Case(
        "timeout_inf",
        "harness.yaml:2: tests.timeout_s",
        "must be a finite number",
        files={"harness.yaml": b"tests:\n  timeout_s: .inf\n"},
        args=CFG,
    ),
    Case(
        "timeout_true",
        "harness.yaml:2: tests.timeout_s",
        "expected a number (got True)",
        files={"harness.yaml": b"tests:\n  timeout_s: true\n"},
        args=CFG,
    ),
    Case(
        "timeout_year",
        "harness.yaml:1: tests.per_test_timeout_s",
        "at most 86400",
        files={"harness.yaml": b"tests: {per_test_timeout_s: 31536000}\n"},
        args=CFG,
    ),
    Case(
        "concurrency_1e20",
        "harness.yaml:1: concurrency.tasks",
        "expected a whole number",
        files={"harness.yaml": b"concurrency: {tasks: 1.0e+20}\n"},
        args=CFG,
    ),
    Case(
        "concurrency_huge",
        "harness.yaml:1: concurrency.tasks",
        "at most 256",
        files={"harness.yaml": b"concurrency: {tasks: 100000000000000000000}\n"},
        args=CFG,
    ),
    Case(
        "max_tokens_1e20",
        "harness.yaml:2: routes.mid.max_tokens",
        "expected a whole number",
        files={"harness.yaml": ROUTE % "1.0e+20"},
        args=CFG,
    ),
    Case(
        "max_tokens_big",
        "harness.yaml:2: routes.mid.max_tokens",
        "at most 1000000",
        files={"harness.yaml": ROUTE % "5000000"},
        args=CFG,
    ),
    Case(
        "escalate_1",
        "harness.yaml:1: loop.escalate",
        "expected true or false",
        files={"harness.yaml": b"loop: {escalate: 1}\n"},
        args=CFG,
    ),
    Case(
        "config_typo",
        "harness.yaml:2: loop.stop_after_no_improvment",
        "did you mean 'stop_after_no_improvement'?",
        files={"harness.yaml": b"loop:\n  stop_after_no_improvment: 3\n"},
        args=CFG,
    ),
    Case(
        "config_dup",
        "harness.yaml:3: tests",
        "duplicate key 'tests' (first on line 1)",
        files={"harness.yaml": b"tests: {timeout_s: 10}\nloop: {}\ntests: {timeout_s: 20}\n"},
        args=CFG,
    ),
    Case(
        "config_latin1",
        "harness.yaml:2:",
        "save the file as UTF-8",
        files={"harness.yaml": b"# ok\n# caf\xe9\n"},
        args=CFG,
    ),
    Case(
        "config_deep",
        "harness.yaml:1:",
        "nests deeper than",
        files={"harness.yaml": DEEP.encode()},
        args=CFG,
    ),
    Case("config_fifo", "harness.yaml", "FIFO", files={"harness.yaml": FIFO}, args=CFG),
    Case(
        "config_tier",
        "harness.yaml:1: steps.review",
        "tier 'budget' has no route",
        files={"harness.yaml": b"steps: {review: budget}\n"},
        args=CFG,
    ),
    Case(
        "step_typo",
        "harness.yaml:1: steps.fixx",
        "unknown step, so it would be ignored; did you mean 'fix'?",
        files={"harness.yaml": b"steps: {fixx: frontier}\n"},
        args=CFG,
    ),
    Case(
        "ledger_dir",
        "harness.yaml:2: budget.ledger_path",
        "is a directory; name the ledger file in it",
        files={"harness.yaml": b"budget:\n  ledger_path: ledger\n", "ledger": DIR},
        args=CFG,
    ),
    Case(
        "metrics_dir",
        "harness.yaml:1: metrics.path",
        "name the .prom file in it",
        files={"harness.yaml": b"metrics: {path: /tmp}\n"},
        args=CFG,
    ),
    Case(
        "metrics_folder_missing",
        "harness.yaml:1: metrics.path",
        "does not exist; create it",
        files={"harness.yaml": b"metrics: {path: /no-such-harness-folder/m/harness.prom}\n"},
        args=CFG,
    ),
    Case(
        "judge_cap_above_route",
        "harness.yaml:1: loop.judge.max_tokens",
        "caps the judge anyway",
        files={"harness.yaml": b"loop: {judge: {max_tokens: 999999}}\n"},
        args=CFG,
    ),
    Case(
        "step_cap_above_route",
        "harness.yaml:1: step_max_tokens.fix",
        "caps the step anyway",
        files={"harness.yaml": b"step_max_tokens: {fix: 999999}\n"},
        args=CFG,
    ),
    Case(
        "per_test_timeout_above_run",
        "harness.yaml:1: tests.per_test_timeout_s",
        "never applies",
        files={"harness.yaml": b"tests: {per_test_timeout_s: 300}\n"},
        args=CFG,
    ),
    Case(
        "seed_with_live",
        "--seed",
        "takes no seed",
        args=("--provider", "live", "--seed", "3"),
        validate=False,
    ),
    Case(
        "replay_loose_with_sim",
        "--replay-loose",
        "is for --provider replay",
        args=("--replay-loose",),
        validate=False,
    ),
    Case(
        "metrics_is_task_list",
        "metrics.path",
        "tasks.yaml is the task list, an input of the harness; write somewhere else",
        files={"harness.yaml": b"metrics: {path: tasks.yaml}\n"},
        args=CFG,
    ),
    Case(
        "metrics_is_reference",
        "metrics.path",
        "an input of task 'calc'",
        files={"harness.yaml": b"metrics: {path: legacy/calc.py}\n"},
        args=CFG,
    ),
    Case(
        "metrics_is_config",
        "metrics.path",
        "the config (--config)",
        files={"harness.yaml": b"metrics: {path: harness.yaml}\n"},
        args=CFG,
    ),
    Case(
        "metrics_over_a_users_file",
        "metrics.path",
        "notes.txt already exists and the harness did not write it",
        files={"harness.yaml": b"metrics: {path: notes.txt}\n", "notes.txt": b"mine\n"},
        args=CFG,
    ),
    Case(
        "prices_not_utf8",
        "prices.yaml:1:",
        "save the file as UTF-8",
        files={"harness.yaml": b"prices: prices.yaml\n", "prices.yaml": b"\xff\xfe"},
        args=CFG,
    ),
    Case(
        "price_negative",
        "prices.yaml:4: models.m.output",
        "must be at least 0 (got '-15')",
        files={
            "harness.yaml": b"prices: prices.yaml\n",
            "prices.yaml": PRICES % b"-15",
        },
        args=CFG,
    ),
    Case(
        "price_nan",
        "prices.yaml:4: models.m.output",
        "must be a finite number",
        files={"harness.yaml": b"prices: prices.yaml\n", "prices.yaml": PRICES % b"NaN"},
        args=CFG,
    ),
    Case(
        "first_call_over_cap",
        "routes.mid.max_tokens",
        "no task could start",
        files={"harness.yaml": ROUTE % "1000000"},
        args=(*CFG, "--budget-usd", "1"),
    ),
]
POLICY = [
    Case(
        "policy_latin1",
        "policy.yaml:2:",
        "save the file as UTF-8",
        files={"policy.yaml": b"version: 1\n# caf\xe9\n"},
        args=POL,
    ),
    Case("policy_fifo", "policy.yaml", "FIFO", files={"policy.yaml": FIFO}, args=POL),
    Case(
        "policy_dup",
        "policy.yaml:2:",
        "duplicate key 'write_roots'",
        files={"policy.yaml": b"write_roots: [out]\nwrite_roots: [/]\n"},
        args=POL,
    ),
    Case(
        "policy_deep",
        "policy.yaml:1:",
        "nests deeper than",
        files={"policy.yaml": DEEP.encode()},
        args=POL,
    ),
    Case(
        "policy_root_nul",
        "policy.yaml line 1: write_roots",
        "is not a folder name; write the folder's path",
        files={"policy.yaml": b'write_roots: ["out\\0x"]\n'},
        args=POL,
    ),
    Case(
        "policy_empty_roots",
        "policy.yaml line 1",
        "give at least one entry",
        files={"policy.yaml": b"write_roots: []\n"},
        args=POL,
    ),
]
CLI = [
    Case(
        "concurrency_flag",
        "--concurrency",
        "must be 1 to 256",
        args=("--concurrency", "100000"),
        validate=False,
    ),
    Case(
        "budget_flag_inf",
        "--budget-usd",
        "positive amount",
        args=("--budget-usd", "inf"),
        validate=False,
    ),
    Case(
        "budget_flag_typo",
        "--budget-usd",
        "up to 1,000,000, not 10000000.0",
        args=("--budget-usd", "1e7"),
        validate=False,
    ),
    Case(
        "resume_unknown_run",
        "--resume: no run 'nope'",
        "omit --resume to start anew",
        args=("--resume", "nope"),
        validate=False,
    ),
]
CASES = TASK_LIST + CONFIG + POLICY + CLI


@pytest.fixture
def project(task_dir: Path) -> Path:
    """The calc task folder (from conftest) inside a parent that holds files 'outside' it."""
    root = task_dir / "proj"
    root.mkdir()
    for name in ("legacy", "acceptance", "solutions"):
        (task_dir / name).rename(root / name)
    return root


def _make(root: Path, files: dict[str, object]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_file():
            path.unlink()
        if content == FIFO:
            os.mkfifo(path)
        elif content == DIR:
            path.mkdir(exist_ok=True)
        elif isinstance(content, tuple) and content[0] == "<link>":
            path.symlink_to(content[1])
        elif isinstance(content, tuple) and content[0] == "<sparse>":
            with open(path, "wb") as stream:
                stream.truncate(content[1])
        else:
            path.write_bytes(content if isinstance(content, bytes) else str(content).encode())


def _snapshot(top: Path) -> dict[str, str]:
    """Every entry under `top`: a file's digest, a link's target, or its kind (FIFOs unread)."""
    seen = {}
    for parent, dirs, files in os.walk(top):
        for name in (*dirs, *files):
            path = Path(parent) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                seen[str(path)] = "link:" + os.readlink(path)
            elif stat.S_ISREG(mode):
                seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                seen[str(path)] = oct(stat.S_IFMT(mode))
    return seen


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every request the simulator receives (there must be none)."""
    seen: list[object] = []
    monkeypatch.setattr(SimProvider, "complete", lambda self, request: seen.append(request))
    return seen


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_malformed_input_exits_2_before_anything_happens(
    case: Case, project: Path, calls: list[object], capsys, monkeypatch
) -> None:
    """Exit 2 naming file:line and the fix; no run folder, no request, no file changed."""
    monkeypatch.chdir(project)
    (project / "tasks.yaml").write_text(case.tasks)
    _make(project, case.files)
    before = _snapshot(project.parent)
    runs = project.parent / "runs"
    argv = [case.tasks_path, "--provider", "sim", "--run-dir", str(runs), *case.args]

    code = main(["run", *argv])
    err = capsys.readouterr().err

    assert (code, case.where in err, case.fix in err) == (2, True, True), err
    assert (False, [], before) == (runs.exists(), calls, _snapshot(project.parent))
    if case.validate and "--config" not in case.args:
        assert main(["tasks", "validate", case.tasks_path, *case.args]) == 2
        assert case.fix in capsys.readouterr().err


def test_the_table_is_big_enough() -> None:
    """The issue asks for at least 40 malformed inputs."""
    assert len(CASES) >= 40


ADD = [c for c in TASK_LIST if c.name in ("latin1", "deep_100000", "billion_laughs", "fifty_mb")]


@pytest.mark.parametrize("case", ADD, ids=[c.name for c in ADD])
def test_tasks_add_to_a_malformed_list_exits_2_and_changes_nothing(
    case: Case, project: Path, capsys, monkeypatch
) -> None:
    """`tasks add` reads the list safely before its round-trip editor: exit 2, file untouched."""
    monkeypatch.chdir(project)
    (project / "tasks.yaml").write_text(case.tasks)
    _make(project, case.files)
    before = _snapshot(project)
    argv = ["--id", "more", "--reference", "legacy/calc.py", "--tests", "acceptance/test_calc.py"]

    code = main(["tasks", "add", "tasks.yaml", *argv, "--output", "out/more_service.py"])

    err = capsys.readouterr().err
    assert (code, case.fix in err, "nothing was added" in err) == (2, True, True), err
    assert _snapshot(project) == before


def test_a_fifo_task_list_is_refused_by_tasks_add_without_blocking(
    project: Path, capsys, monkeypatch
) -> None:
    """Reading a FIFO would block forever; `tasks add` refuses it at once."""
    monkeypatch.chdir(project)
    os.mkfifo(project / "pipe.yaml")
    argv = ["--id", "x", "--reference", "legacy/calc.py", "--tests", "acceptance/test_calc.py"]

    code = main(["tasks", "add", "pipe.yaml", *argv, "--output", "out/x_service.py"])

    assert (code, "is a FIFO" in capsys.readouterr().err) == (2, True)


class _Unreachable:
    """A live adapter for tests: any request is a test failure, never a network call."""

    def complete(self, request: object) -> object:
        raise AssertionError(f"a provider request was made: {request!r}")


def _unreachable_adapter(name: str, *, timeout_s: float, **_: object) -> _Unreachable:
    return _Unreachable()


def test_a_live_run_refuses_an_unusable_default_ledger_before_the_run_folder(
    project: Path, capsys, monkeypatch
) -> None:
    """The default day ledger under a state folder that is a file: exit 2, no run folder."""
    state = project.parent / "state-file"
    state.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setattr(providers, "build_adapter", _unreachable_adapter)
    (project / "tasks.yaml").write_text(VALID)
    runs = project.parent / "runs"

    code = main(["run", str(project / "tasks.yaml"), "--run-dir", str(runs)])

    err = capsys.readouterr().err
    assert (code, "is a file, not a folder" in err, runs.exists()) == (2, True, False), err


def test_a_live_run_refuses_a_damaged_day_ledger_before_the_run_folder(
    project: Path, capsys, monkeypatch
) -> None:
    """A day's spend stored as a negative amount would lift the day cap: exit 2, no request."""
    ledger = project.parent / "spend.sqlite"
    SqliteLedger(ledger).close()
    with sqlite3.connect(ledger) as db:
        db.execute("INSERT INTO days VALUES (date('now', 'localtime'), '-1000')")
    db.close()
    (project / "harness.yaml").write_text(f"budget: {{ledger_path: {ledger}, daily_cap_usd: 5}}\n")
    monkeypatch.setattr(providers, "build_adapter", _unreachable_adapter)
    (project / "tasks.yaml").write_text(VALID)
    runs = project.parent / "runs"
    argv = ["run", str(project / "tasks.yaml"), "--run-dir", str(runs), *CFG]
    monkeypatch.chdir(project)

    code = main(argv)

    err = capsys.readouterr().err
    assert (code, "is damaged" in err, "restore the file from a backup" in err) == (2, True, True)
    assert list(runs.glob("2*")) == []
