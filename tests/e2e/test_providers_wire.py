"""End to end: `harness run --provider live` against fake Anthropic and Gemini servers.

The real CLI builds the real providers from the environment (fake keys); the SDKs find the
fake servers through ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL, as behind a gateway.
"""

from __future__ import annotations

import json
import socket
import textwrap
from decimal import Decimal
from functools import partial
from pathlib import Path

import pytest
import structlog

from harness.calls import RetryPolicy
from harness.cli import main
from harness.errors import ExitCode
from harness.llm import Usage
from harness.pricing import cost, load_prices
from tests.conftest import write
from tests.fakeserver import (
    Reply,
    anthropic_error,
    anthropic_sse,
    fake_vendors,
    gemini_error,
    gemini_reply,
    json_reply,
)

pytestmark = pytest.mark.slow

ANTHROPIC_KEY = "sk-ant-api03-E2EFAKEKEYE2EFAKEKEY"
GEMINI_KEY = "AIzaSyE2EFAKEFAKEFAKEFAKEFAKEFAKE000"
MID, CHEAP = "claude-sonnet-5-5", "gemini-3.8-flash"
SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
WRITE_REPLY = f"Here is the port.\n\n```python\n{SOLUTION}```\n"
CONFIG = f"""
routes:
  cheap: {{provider: gemini, model: {CHEAP}, max_tokens: 16384}}
  mid: {{provider: anthropic, model: {MID}, max_tokens: 32000}}
  frontier: {{provider: anthropic, model: claude-opus-5-5, max_tokens: 64000}}
provider_timeout_s: 30
# These nights are about the interactive wire (each request scripted in order): the
# shipped batch rounds are tested against the fake batch APIs in tests/providers.
batch: {{enabled: false}}
"""


@pytest.fixture(autouse=True)
def restore_logging():
    """A run configures structlog to write its events file; undo that for later tests."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture
def task_list(task_dir: Path) -> Path:
    """One tiny porting task (conftest's calc folder), its task list and a live config."""
    write(task_dir / "harness.yaml", CONFIG)
    return write(
        task_dir / "tasks.yaml",
        """
        tasks:
          - id: calc
            reference: legacy/calc.py
            tests: acceptance/test_calc.py
            output: out/calc_service.py
        """,
    )


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch):
    """A fake Anthropic and a fake Gemini, reached only through the SDKs' base-URL variables."""
    with fake_vendors(monkeypatch, ANTHROPIC_KEY, GEMINI_KEY) as both:
        yield both


def run_live(task_list: Path, concurrency: int = 1) -> tuple[int, dict, list[dict]]:
    runs = task_list.parent / "runs"
    code = main(
        [
            "run",
            str(task_list),
            "--provider",
            "live",
            "--run-dir",
            str(runs),
            "--config",
            str(task_list.parent / "harness.yaml"),
            "--concurrency",
            str(concurrency),
        ]
    )
    root = (runs / "latest").resolve()
    summary = json.loads((root / "summary.json").read_text())
    events = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    return code, summary, events


def test_live_run_passes_and_prices_every_call_exactly(servers, task_list):
    """Write (Anthropic) then review (Gemini) pass the task; each call is priced exactly."""
    anthropic, gemini = servers
    anthropic.script(
        anthropic_sse(
            WRITE_REPLY, model=MID, input_tokens=1200, cache_write=3000, output_tokens=400
        )
    )
    gemini.script(
        gemini_reply("CLEAN", model_version=CHEAP, prompt=2000, candidates=2, thoughts=100)
    )
    prices = load_prices()
    expected = {
        MID: cost(Usage(1200, 3000, 0, 400), prices.get(MID)),
        CHEAP: cost(Usage(2000, 0, 0, 102), prices.get(CHEAP)),
    }

    code, summary, events = run_live(task_list)

    calls = {e["model"]: Decimal(e["cost_usd"]) for e in events if e["event"] == "call_finished"}
    task = summary["tasks"][0]
    assert (code, summary["provider"], task["status"]) == (0, "live", "passed")
    assert expected == calls
    assert round(float(sum(expected.values())), 6) == summary["budget"]["spent_usd"]
    assert Path(task["output"]).read_text() == SOLUTION
    assert (len(anthropic.requests), len(gemini.requests)) == (1, 1)


def test_live_run_sends_cacheable_prefix_and_keeps_keys_out_of_the_run_dir(servers, task_list):
    """The write call marks only its stable block for caching; no key reaches the run folder."""
    anthropic, gemini = servers
    anthropic.script(anthropic_sse(WRITE_REPLY, model=MID))
    gemini.script(gemini_reply("CLEAN", model_version=CHEAP))

    run_live(task_list)

    blocks = anthropic.requests[0].json["messages"][0]["content"]
    assert [True] + [False] * (len(blocks) - 1) == ["cache_control" in b for b in blocks]
    assert gemini.requests[0].path.endswith(f"/models/{CHEAP}:generateContent")
    run_files = (task_list.parent / "runs").rglob("*")
    leaked = [
        p
        for p in run_files
        if p.is_file()
        and (
            ANTHROPIC_KEY in p.read_text(errors="ignore")
            or GEMINI_KEY in p.read_text(errors="ignore")
        )
    ]
    assert leaked == []


def test_prompt_cache_off_sends_no_cache_breakpoint(servers, task_list):
    """`prompt_cache: false`: the write reaches Anthropic with no cache_control anywhere."""
    anthropic, gemini = servers
    anthropic.script(anthropic_sse(WRITE_REPLY, model=MID))
    gemini.script(gemini_reply("CLEAN", model_version=CHEAP))
    config = task_list.parent / "harness.yaml"
    config.write_text(config.read_text() + "prompt_cache: false\n")

    code, _, _ = run_live(task_list)

    body = anthropic.requests[0].json
    assert code == 0
    assert "cache_control" not in json.dumps(body)
    assert len(body["messages"][0]["content"]) == 2  # the stable block is still sent first


def test_live_run_retries_an_overloaded_call(servers, task_list):
    """A 529 on the write is retried after retry-after-ms, logged, and the task still passes."""
    anthropic, gemini = servers
    anthropic.script(
        anthropic_error(529, "overloaded_error", headers={"retry-after-ms": "1"}),
        anthropic_sse(WRITE_REPLY, model=MID),
    )
    gemini.script(gemini_reply("CLEAN", model_version=CHEAP))

    code, _, events = run_live(task_list)

    retries = [e for e in events if e["event"] == "call_retry"]
    assert (code, len(anthropic.requests)) == (0, 2)
    assert [(e["reason"], e["status"]) for e in retries] == [("transient", 529)]


ALL_ON_GEMINI = "steps: {write: cheap, review: cheap, rewrite: cheap, fix: cheap}\n"
HALTS = {
    "anthropic-401": ("anthropic", anthropic_error(401, "authentication_error", "invalid key")),
    "anthropic-403": ("anthropic", anthropic_error(403, "permission_error", "key disabled")),
    "anthropic-402": ("anthropic", anthropic_error(402, "billing_error", "credit too low")),
    "anthropic-spend-limit": (
        "anthropic",
        anthropic_error(
            429, "rate_limit_error", "limit", error_code="enforced_spend_limit_reached"
        ),
    ),
    "anthropic-400-no-credit": (
        "anthropic",
        anthropic_error(
            400,
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API. "
            "Please go to Plans & Billing to upgrade or purchase credits.",
        ),
    ),
    "gemini-quota-limit-0": (
        "gemini",
        gemini_error(
            429,
            "RESOURCE_EXHAUSTED",
            "Quota exceeded for metric: generativelanguage.googleapis.com/"
            "generate_content_free_tier_requests, limit: 0, model: gemini-3.8-flash",
        ),
    ),
    "gemini-402": ("gemini", gemini_error(402, "PAYMENT_REQUIRED", "payment required")),
    "gemini-API_KEY_INVALID": (
        "gemini",
        gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            details=[
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            ],
        ),
    ),
}


def _three_tasks(task_list: Path) -> None:
    """The calc task three times over, so three workers want to call at once."""
    extra = "".join(
        f"- id: calc_{n}\n  reference: legacy/calc.py\n  tests: acceptance/test_calc.py\n"
        f"  output: out{n}/calc_service.py\n"
        for n in (2, 3)
    )
    task_list.write_text(task_list.read_text() + textwrap.indent(extra, "  "))


@pytest.mark.parametrize("case", list(HALTS), ids=list(HALTS))
def test_refused_key_or_account_halts_the_run_after_exactly_one_request(servers, task_list, case):
    """The first refusal (bad key, billing, spend limit) halts the run before any other worker
    sends a request: status halted, exit 4, and summary.md says what happened and what to do."""
    provider, refusal = HALTS[case]
    anthropic, gemini = servers
    (anthropic if provider == "anthropic" else gemini).script(refusal)
    if provider == "gemini":
        config = task_list.parent / "harness.yaml"
        config.write_text(config.read_text() + ALL_ON_GEMINI)
    _three_tasks(task_list)

    code, summary, events = run_live(task_list, concurrency=3)

    md = (task_list.parent / "runs" / "latest" / "summary.md").read_text()
    human = md.split("## Needs a human")[1].split("## Tasks")[0]
    listed = {line.split(":")[0][2:] for line in human.splitlines() if "halted" in line}
    key_refused = case in ("anthropic-401", "anthropic-403", "gemini-API_KEY_INVALID")
    variable = "ANTHROPIC_API_KEY" if provider == "anthropic" else "GEMINI_API_KEY"
    causes = sorted(t["cause"] for t in summary["tasks"])
    assert len(anthropic.requests) + len(gemini.requests) == 1
    assert (code, summary["status"]) == (ExitCode.HALTED, "halted") == (4, "halted")
    assert causes == ["halted"] * 3
    assert sorted(t["status"] for t in summary["tasks"]) == ["error", "skipped", "skipped"]
    assert "— halted" in md and "run halted" in human and "--resume" in human
    assert (variable in human) == key_refused  # a refused key names the variable to check
    assert listed >= {"calc", "calc_2", "calc_3"}  # every task it stopped needs a human
    assert [e["event"] for e in events if e["event"] == "run_halted"] == ["run_halted"]


def test_missing_key_is_bad_input_and_nothing_is_called(servers, task_list, monkeypatch, capsys):
    """Without GEMINI_API_KEY the run exits 2 naming the variable, before any request."""
    anthropic, gemini = servers
    monkeypatch.delenv("GEMINI_API_KEY")

    code = main(
        [
            "run",
            str(task_list),
            "--provider",
            "live",
            "--run-dir",
            str(task_list.parent / "runs"),
            "--config",
            str(task_list.parent / "harness.yaml"),
        ]
    )

    assert (code, len(anthropic.requests), len(gemini.requests)) == (2, 0, 0)
    assert "GEMINI_API_KEY" in capsys.readouterr().err


@pytest.mark.parametrize(
    "refusal",
    [
        anthropic_error(413, "request_too_large", "Request exceeds the maximum allowed size"),
        anthropic_error(400, "invalid_request_error", "prompt is too long: 250000 > 200000"),
    ],
    ids=["413", "400-prompt-too-long"],
)
def test_a_prompt_too_long_is_sent_once_and_ends_the_task(servers, task_list, refusal):
    """A 413 or context-too-long answer ends the task's attempts with that reason at once: one
    request, never resent, and the task is listed under Needs a human."""
    anthropic, gemini = servers
    anthropic.script(refusal)

    code, summary, _ = run_live(task_list)

    task = summary["tasks"][0]
    md = (task_list.parent / "runs" / "latest" / "summary.md").read_text()
    human = md.split("## Needs a human")[1].split("## Tasks")[0]
    assert (len(anthropic.requests), len(gemini.requests)) == (1, 0)
    assert (code, task["status"], task["cause"]) == (1, "failed", "context_too_long")
    assert len(task["attempts"]) == 1
    assert f"- calc: failed: {task['reason']}" in human


# Truthful ends: a key or base URL that cannot work is exit 2 at start-up (naming the
# variable, never the key); a night no provider answered ends `halted`, exit 4.
NEWLINE_KEY = "sk-ant-api03-FIRSTHALFSECRET\nSECONDHALFSECRET99"


def _run(task_list: Path) -> int:
    runs = task_list.parent / "runs"
    argv = ["run", str(task_list), "--provider", "live", "--run-dir", str(runs)]
    return main([*argv, "--config", str(task_list.parent / "harness.yaml")])


def _texts(*roots: Path) -> str:
    return "".join(
        p.read_bytes().decode("utf-8", "replace")
        for root in roots
        if root.exists()
        for p in root.rglob("*")
        if p.is_file()
    )


def test_a_key_with_a_newline_is_exit_2_naming_the_variable_and_never_its_value(
    servers, task_list, monkeypatch, capsys
):
    """Exit 2 before any request; the advice names ANTHROPIC_API_KEY; no piece of the key
    is on the console or in any file under the run directory."""
    anthropic, gemini = servers
    monkeypatch.setenv("ANTHROPIC_API_KEY", NEWLINE_KEY)

    code = _run(task_list)

    out = capsys.readouterr()
    console = out.out + out.err
    seen = console + _texts(task_list.parent / "runs")
    pieces = [p for p in NEWLINE_KEY.split("\n")]
    assert (code, len(anthropic.requests), len(gemini.requests)) == (2, 0, 0)
    assert "ANTHROPIC_API_KEY" in console
    assert [p for p in pieces if p in seen] == []


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ANTHROPIC_BASE_URL", "htp//gateway"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:port"),
        ("GOOGLE_GEMINI_BASE_URL", "gateway.example.com"),
    ],
)
def test_a_malformed_base_url_is_exit_2_at_start_up(
    servers, task_list, monkeypatch, capsys, variable, value
):
    """A base URL no request can be sent to is bad input, named, before anything is spent."""
    monkeypatch.setenv(variable, value)

    code = _run(task_list)

    err = capsys.readouterr().err
    assert (code, variable in err, (task_list.parent / "runs").exists()) == (2, True, False)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed when the block ends: connections are refused


def test_a_gateway_refusing_every_connection_halts_the_night_with_exit_4(
    servers, task_list, monkeypatch
):
    """Every request refused on the transport: the night ends `halted`, exit 4, and the
    summary's Needs a human says that no provider answered."""
    port = _closed_port()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", f"http://127.0.0.1:{port}")
    _quick_retries(monkeypatch)

    code = _run(task_list)

    root = (task_list.parent / "runs" / "latest").resolve()
    summary = json.loads((root / "summary.json").read_text())
    markdown = (root / "summary.md").read_text()
    needs = markdown.split("## Needs a human")[1].split("## Tasks")[0]
    assert (code, summary["status"]) == (ExitCode.HALTED, "halted")
    assert "no provider gave a usable reply" in needs


def _quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    quick = partial(RetryPolicy, backoff_base_s=0.0, backoff_max_s=0.0, max_attempts=2)
    monkeypatch.setattr("harness.runner.wiring.RetryPolicy", quick)


GARBAGE = {
    "html-502": Reply(
        status=502,
        body=b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        content_type="text/html",
    ),
    "html-200": Reply(
        body=b"<html><body>Sign in to the proxy</body></html>", content_type="text/html"
    ),
    "wrong-json-200": json_reply({"status": "ok", "result": "hello"}),
    "vendor-500": None,  # the vendor's own 5xx, in its own format
}


def _garbage(vendor: str, case: str) -> Reply:
    if GARBAGE[case] is not None:
        return GARBAGE[case]
    if vendor == "anthropic":
        return anthropic_error(500, "api_error", "internal error")
    return gemini_error(500, "INTERNAL", "internal error")


@pytest.mark.parametrize("vendor", ["anthropic", "gemini"])
@pytest.mark.parametrize("case", list(GARBAGE))
def test_a_gateway_answering_garbage_to_every_request_halts_having_spent_nothing(
    servers, task_list, monkeypatch, vendor, case
):
    """An error page, a page that is not the vendor's reply or a 5xx to every request: the
    first call's tries are the only requests (one task at a time), each charged nothing (the
    vendor bills none of them), and the night ends `halted`, exit 4, its cause in
    summary.json."""
    anthropic, gemini = servers
    target = anthropic if vendor == "anthropic" else gemini
    target.script(*[_garbage(vendor, case)] * 20)
    if vendor == "gemini":
        config = task_list.parent / "harness.yaml"
        config.write_text(config.read_text() + ALL_ON_GEMINI)
    _three_tasks(task_list)
    _quick_retries(monkeypatch)

    code, summary, _ = run_live(task_list, concurrency=1)

    notes = " ".join(summary["notes"])
    assert (code, summary["status"], summary["budget"]["spent_usd"]) == (4, "halted", 0)
    assert "no provider gave a usable reply" in notes and "--resume" in notes
    assert (len(target.requests), sorted(t["cause"] for t in summary["tasks"])) == (
        2,
        ["halted"] * 3,
    )


def test_a_night_with_one_usable_reply_is_not_halted(servers, task_list, monkeypatch):
    """A provider that gave one usable reply works: later failures (a 500 to every other
    request) end tasks, not the night."""
    anthropic, gemini = servers
    anthropic.script(anthropic_sse(WRITE_REPLY, model=MID))
    anthropic.script(*[anthropic_error(500, "api_error", "boom")] * 40)
    gemini.script(*[gemini_error(500, "INTERNAL", "boom")] * 40)
    _quick_retries(monkeypatch)

    code = _run(task_list)

    summary = json.loads((task_list.parent / "runs" / "latest" / "summary.json").read_text())
    assert (code in (0, 1), summary["status"]) == (True, "completed")
    assert ANTHROPIC_KEY not in json.dumps(summary)
