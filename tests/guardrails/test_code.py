"""Guardrails on candidate code: forbidden commands however they are built, calls, patterns."""

from __future__ import annotations

import textwrap

import pytest

from harness.guardrails import Policy, load_policy


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    return load_policy(None, task_list_dir=tmp_path_factory.mktemp("tasks"))


def _rules(policy: Policy, code: str) -> list[str]:
    return [v.rule for v in policy.check_code(textwrap.dedent(code))]


FORCE_PUSH_CODE = {
    "argument list": 'import subprocess\nsubprocess.run(["git", "push", "-f"])',
    "string concatenation": (
        'import subprocess\nsubprocess.run("git " + "pu" + "sh" + " --force", shell=True)'
    ),
    "f-string with constants": 'import os\nflag = "-f"\nos.system(f"git push {flag} origin")',
    "join of a list": 'import subprocess as sp\nsp.call(" ".join(["git", "push", "-f"]), True)',
    "list built by append": (
        'import subprocess\ncmd = ["git", "push"]\ncmd.append("--force")\nsubprocess.call(cmd)'
    ),
    "list built by +=": 'import subprocess as s\ncmd = ["git"]\ncmd += ["push", "-f"]\ns.run(cmd)',
    "starred list": 'import subprocess\nbase = ["git", "push"]\nsubprocess.run([*base, "-f"])',
    "imported under another name": 'from subprocess import run as r\nr(["git", "push", "-f"])',
    "function alias": 'import subprocess\nrun = subprocess.Popen\nrun(["git", "push", "-f"])',
    "os.execlp": 'import os\nos.execlp("git", "git", "push", "-f")',
    "os.execvp": 'import os\nos.execvp("git", ["git", "push", "-f"])',
    "os.spawnvp": 'import os\nos.spawnvp(os.P_WAIT, "git", ["git", "push", "-f"])',
    "os.posix_spawnp": 'import os\nos.posix_spawnp("git", ["git", "push", "-f"], {})',
    "pty.spawn": 'import pty\npty.spawn(["git", "push", "-f"])',
    "os.popen": 'import os\nos.popen("git push -f").read()',
    "getattr": 'import os\ngetattr(os, "sys" + "tem")("git push -f")',
    "__import__": '__import__("os").system("git push -f")',
    "shutil.which": 'import shutil as s, subprocess as p\np.run([s.which("git"), "push", "-f"])',
    ".format": 'import os\nos.system("git {} {}".format("push", "-f"))',
    "% formatting": 'import os\nos.system("git %s %s" % ("push", "-f"))',
    "conditional flag": 'import os\nforce = True\nos.system("git push " + ("-f" if force else ""))',
    ".split()": 'import subprocess\nsubprocess.run("git push -f".split())',
    "shlex.split": 'import subprocess, shlex\nsubprocess.run(shlex.split("git push --force"))',
    "base64": 'import os, base64\nos.system(base64.b64decode("Z2l0IHB1c2ggLWY=").decode())',
    "sh -c inside the list": 'import subprocess\nsubprocess.run(["sh", "-c", "git push -f"])',
    "asyncio": (
        "import asyncio\nasync def f():\n"
        '    await asyncio.create_subprocess_exec("git", "push", "--force")'
    ),
    "fabric/invoke runner": 'def release(c):\n    c.run("git push -f origin main")',
    "exec of a string": "exec(\"import os; os.system('git push -f')\")",
    "keyword argument": 'import subprocess\nsubprocess.run(args=["git", "push", "-f"])',
    "instance attribute": (
        "import subprocess\nclass Publisher:\n    def __init__(self):\n"
        '        self.cmd = ["git", "push"]\n        self.cmd.append("-f")\n'
        "    def publish(self):\n        subprocess.run(self.cmd)"
    ),
    "class constant": (
        'import subprocess\nclass P:\n    CMD = ("git", "push", "-f")\n'
        "    def go(self):\n        subprocess.run(self.CMD)"
    ),
    "functools.partial": (
        'import functools, subprocess\nfunctools.partial(subprocess.run, ["git", "push", "-f"])()'
    ),
}


@pytest.mark.parametrize("code", FORCE_PUSH_CODE.values(), ids=FORCE_PUSH_CODE.keys())
def test_forbidden_command_is_found_however_the_code_builds_it(policy: Policy, code: str) -> None:
    """The command a call would run is folded from constants and matched like a command."""
    assert "git-force-push" in _rules(policy, code)


def test_deploys_in_code_are_found(policy: Policy) -> None:
    """Deploy commands reached through subprocess are forbidden too."""
    code = """
    import subprocess
    subprocess.run(["kubectl", "--context", "prod", "apply", "-f", "k8s/"], check=True)
    subprocess.run("gcloud run deploy orders --image x", shell=True)
    """

    assert _rules(policy, code) == ["kubectl-mutate", "gcloud-deploy"]


def test_text_fallback_catches_what_folding_cannot(policy: Policy) -> None:
    """A command hidden behind an unknown helper is still caught by the policy's regex."""
    code = 'cmd = build("git push", "--force")\nrunner.execute_later(cmd)\n'

    assert _rules(policy, code) == ["git-force-push-text"]


@pytest.mark.parametrize(
    "code",
    [
        'import subprocess\nsubprocess.run(["git", "status"], check=True, timeout=10)',
        'import subprocess\nsubprocess.run(["kubectl", "get", "pods"], timeout=5)',
        'import subprocess\ndef push(remote):\n    subprocess.run(["git", "push", remote, "main"])',
        "import subprocess\ndef sh(cmd):\n    return subprocess.run(cmd, shell=True, timeout=60)",
        'import os\nos.system("ls -la")',
        "# never git push -f from here\nx = 1\n",
        'HELP = "use git push to publish"\n',
        'import subprocess\nsubprocess.run(["git", "commit", "-m", "fix: push -f no more"])',
        'import shutil\nshutil.rmtree("/tmp/scratch")',
        "import socket\ns = socket.create_connection(('localhost', 80), timeout=3)",
    ],
)
def test_safe_code_passes(policy: Policy, code: str) -> None:
    """Ordinary subprocess use, comments and strings do not trip the rules."""
    assert _rules(policy, code) == []


def test_forbidden_calls_are_found_through_imports_and_aliases(policy: Policy) -> None:
    """A forbidden call is found by its dotted name, however it was imported."""
    code = """
    import os as o
    from os import killpg as k
    o.killpg(0, 9)
    k(0, 9)
    getattr(o, "setuid")(0)
    """

    assert set(_rules(policy, code)) == {"signal-process-group", "change-privileges"}


def test_credentials_are_reported_by_line_without_the_secret(policy: Policy) -> None:
    """A hardcoded credential is a violation that names the line, never the secret."""
    secret = "AKIA" + "IOSFODNN7EXAMPLE"
    violations = policy.check_code(f'x = 1\nKEY = "{secret}"\n')

    assert [(v.rule, v.detail) for v in violations] == [
        ("aws-access-key", "line 2: a hardcoded AWS access key")
    ]
    assert secret not in str(violations)


def test_unparseable_code_is_a_violation_not_an_exception(policy: Policy) -> None:
    """Code that does not parse is refused with its line; nothing is raised."""
    assert [str(v) for v in policy.check_code("def f(:\n    pass\n")] == [
        "guardrail unparseable-code: line 1: invalid syntax; code that does not parse is never run"
    ]
    assert _rules(policy, "x = 1\x00") == ["unparseable-code"]
    secret = "AKIA" + "IOSFODNN7EXAMPLE"
    assert _rules(policy, f'KEY = "{secret}"\ndef f(:\n') == ["unparseable-code", "aws-access-key"]


def test_deeply_nested_code_is_refused_not_crashed(policy: Policy) -> None:
    """Code nested beyond what can be checked is a violation."""
    code = "x = " + "(" * 5000 + "1" + ")" * 5000

    assert _rules(policy, code) in (["unparseable-code"], ["code-too-complex"])


def test_python_dash_c_is_checked_as_code(policy: Policy) -> None:
    """A command running `python -c CODE` is refused when CODE would run a forbidden command."""
    violation = policy.check_command(["python3", "-c", "import os; os.system('git push -f')"])

    assert violation is not None
    assert violation.rule == "git-force-push"


@pytest.mark.parametrize(
    ("language", "code"),
    [
        (
            "go",
            'package x\n\nimport "os/exec"\n\nfunc F() { exec.Command("git", "push", "-f") }\n',
        ),
        (
            "javascript",
            'import { execSync } from "node:child_process";\nexecSync("git push --force");\n',
        ),
        (
            "javascript",
            'import { spawn } from "node:child_process";\nspawn("git", ["push", "-f"]);\n',
        ),
        ("rust", 'fn f() { Command::new("git").args(["push", "--force"]).status(); }\n'),
    ],
)
def test_literal_commands_in_other_languages_pass_the_command_policy(
    policy: Policy, language: str, code: str
) -> None:
    """A process API given a forbidden command as literals is a violation in Go, JS, Rust."""
    assert "git-force-push" in [v.rule for v in policy.check_code(code, language)]


def test_other_languages_get_the_regex_checks_and_a_note(policy: Policy) -> None:
    """Python's ast checks are skipped with a logged note; secrets are still found; a
    pattern that ignores comments skips a Go comment, found by the grammar."""
    from structlog.testing import capture_logs

    policy.noted.discard(("code", "go"))
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    code = f'package x\n\n// git push --force is what we never do\nconst Key = "{key}"\n'

    with capture_logs() as logs:
        rules = [v.rule for v in policy.check_code(code, "go")]

    assert rules == ["aws-access-key"]
    assert [e["event"] for e in logs] == ["code_check_limited"]
    assert logs[0]["language"] == "go"


def test_unparseable_go_is_not_a_python_syntax_violation(policy: Policy) -> None:
    """Go code is never fed to Python's parser: no unparseable-code violation."""
    assert policy.check_code("package x\n\nfunc F() int { return 1 }\n", "go") == []


def test_a_string_given_to_exec_that_does_not_parse_is_not_refused(policy: Policy) -> None:
    """six's Python 2 branch: exec of a string that is not Python 3 raises SyntaxError before
    it runs anything, so it is no violation (a forbidden call inside a parsing string still is)."""
    code = 'import sys\nif sys.version_info[0] == 2:\n    exec("raise tp, value, tb")\n'
    bad = "exec(\"import os; os.system('git push --force')\")\n"

    assert (_rules(policy, code), _rules(policy, bad) != []) == ([], True)
