"""Scar-tissue warnings on shipped code: reported, never failing the task."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.guardrails import Policy, load_policy


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    return load_policy(None, task_list_dir=tmp_path_factory.mktemp("tasks"))


def _checks(policy: Policy, code: str) -> list[str]:
    """The check ids of the warnings, in line order."""
    return [w.rsplit("[", 1)[1].rstrip("]") for w in policy.scar_tissue(textwrap.dedent(code))]


def test_hardcoded_keys_are_warned_about(policy: Policy) -> None:
    """A secret-looking name bound to a literal is a hardcoded-key warning."""
    code = """
    API_KEY = "k3y-abcdef0123456789"
    settings.auth_token = "0123456789abcdef"
    client = Client(api_key="sk_live_abcdefgh12345678")
    config = {"password": "hunter2-but-longer"}
    """

    assert _checks(policy, code) == ["hardcoded-key"] * 4


@pytest.mark.parametrize(
    "code",
    [
        'API_KEY = os.environ["API_KEY"]',
        'token_env = "OPENAI_API_KEY"',
        'password = "changeme"',
        'api_key = "<your key here>"',
        'token = ""',
        'token_url = "https://auth.example.com/token"',
        'secret_file = "/run/secrets/db"',
    ],
)
def test_names_and_placeholders_are_not_keys(policy: Policy, code: str) -> None:
    """Env var names, placeholders, URLs and paths are not reported as keys."""
    assert _checks(policy, code) == []


def test_network_calls_without_timeouts_are_warned_about(policy: Policy) -> None:
    """requests, httpx and urllib calls with no timeout are warned about, by line."""
    code = """
    import requests, httpx
    from urllib.request import urlopen
    requests.get(url)
    httpx.post(url, json={})
    urlopen(url)
    requests.get(url, timeout=5)
    urlopen(url, None, 10)
    requests.request("GET", url, **options)
    """
    warnings = policy.scar_tissue(textwrap.dedent(code))

    assert [w.split(":")[0] for w in warnings] == ["line 4", "line 5", "line 6"]
    assert "requests.get() without a timeout can hang the service; pass timeout=" in warnings[0]


def test_bare_except_is_warned_about(policy: Policy) -> None:
    """`except:` is a warning; `except Exception:` is not."""
    code = """
    try:
        pass
    except:
        pass
    try:
        pass
    except Exception:
        pass
    """

    assert policy.scar_tissue(textwrap.dedent(code)) == [
        "line 4: bare `except:` also catches KeyboardInterrupt; name the exceptions [bare-except]"
    ]


def test_policy_regex_checks_are_added(policy: Policy) -> None:
    """The shipped policy's own regex checks report their message and id."""
    code = """
    import requests
    requests.get(url, verify=False, timeout=3)
    print("debug")  # TODO remove
    """

    assert _checks(policy, code) == ["tls-verify-off", "todo-left", "print-debugging"]


def test_operator_scar_checks_extend_the_shipped_ones(tmp_path: Path) -> None:
    """An operator's scar_checks add to the shipped regexes; `remove_shipped` drops one."""
    path = tmp_path / "policy.yaml"
    path.write_text(
        "scar_checks:\n  - {id: no-sleep, pattern: 'time\\.sleep\\(', message: sleeps}\n"
        "remove_shipped: {scar_checks: [print-debugging]}\n"
    )
    policy = load_policy(path, task_list_dir=tmp_path)

    assert policy.scar_tissue("import time\ntime.sleep(1)\nprint(1)\n") == [
        "line 2: sleeps [no-sleep]"
    ]


def test_unparseable_code_still_gets_the_regex_checks(policy: Policy) -> None:
    """Scar tissue never raises: regexes run and the AST checks are noted as skipped."""
    assert policy.scar_tissue("print(1)\ndef f(:\n") == [
        "the code does not parse, so the built-in checks were skipped [parse]",
        "line 1: print() in service code; use the logger [print-debugging]",
    ]


def test_clean_code_has_no_warnings(policy: Policy) -> None:
    """Well-behaved service code produces no warnings."""
    code = """
    import logging, os
    import httpx

    log = logging.getLogger(__name__)
    API_KEY = os.environ.get("ORDERS_API_KEY", "")

    def fetch(url: str) -> dict:
        try:
            return httpx.get(url, timeout=10).json()
        except httpx.HTTPError:
            log.exception("fetch failed")
            raise
    """

    assert policy.scar_tissue(textwrap.dedent(code)) == []


GO_CODE = """package rle

// Encode run-length encodes s.
func Encode(s string) string {
	token := "k3y-abcdef0123456789"
	return s + token
}
"""


def test_go_code_gets_no_python_parse_warning(tmp_path: Path) -> None:
    """Go is never fed to Python's parser: no `[parse]` warning, no ast-based warnings."""
    policy = load_policy(None, task_list_dir=tmp_path)

    assert policy.scar_tissue(GO_CODE, "go") == []


def test_other_languages_still_get_the_operator_patterns(tmp_path: Path) -> None:
    """The policy's scar_checks regexes are text-level, so they apply to JavaScript too."""
    path = tmp_path / "policy.yaml"
    path.write_text("scar_checks:\n  - {id: no-eval, pattern: '\\beval\\(', message: eval}\n")
    policy = load_policy(path, task_list_dir=tmp_path)

    assert policy.scar_tissue("const x = 1;\neval(y);\n", "javascript") == [
        "line 2: eval [no-eval]"
    ]


def test_a_limited_language_is_noted_once_per_run_in_the_log(tmp_path: Path) -> None:
    """The skipped ast checks are said once per policy (one run) and language, as an event."""
    from structlog.testing import capture_logs

    policy = load_policy(None, task_list_dir=tmp_path).with_write_roots(tmp_path / "run")
    with capture_logs() as logs:
        for _ in range(3):
            policy.scar_tissue(GO_CODE, "go")
        policy.scar_tissue("export const x = 1;\n", "javascript")
        policy.scar_tissue("x = 1\n")

    assert [(e["event"], e["language"]) for e in logs] == [
        ("scar_check_limited", "go"),
        ("scar_check_limited", "javascript"),
    ]


def test_python_that_does_not_parse_still_says_so(tmp_path: Path) -> None:
    """The `[parse]` warning stays for Python, where it means the built-in checks were skipped."""
    policy = load_policy(None, task_list_dir=tmp_path)

    assert policy.scar_tissue("def f(:\n", "python") == [
        "the code does not parse, so the built-in checks were skipped [parse]"
    ]
