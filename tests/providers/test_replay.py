"""Replay: `harness run --provider replay --replay-from RUN` serves a night's recorded replies.

The recorded night goes down the live path (the real SDKs against the fake servers); the
replay runs with the fakes stopped, so any request it made would fail.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
import structlog

from harness.cli import main
from harness.llm import (
    CallKey,
    CallRequest,
    Completion,
    Prompt,
    ProviderError,
    RecordedCall,
    Route,
    StopReason,
    Usage,
)
from harness.providers.replay import ReplayProvider
from harness.store import RunDir, read_calls
from tests._night import db_rows
from tests.conftest import write
from tests.fakeserver import FakeLLMServer, anthropic_sse, gemini_reply

pytestmark = pytest.mark.slow

MID, CHEAP = "claude-sonnet-5-5", "gemini-3.8-flash"
HALF = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"
WHOLE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
CONFIG = f"""
routes:
  cheap: {{provider: gemini, model: {CHEAP}, max_tokens: 16384}}
  mid: {{provider: anthropic, model: {MID}, max_tokens: 32000}}
  frontier: {{provider: anthropic, model: claude-opus-5-5, max_tokens: 64000}}
provider_timeout_s: 30
batch: {{enabled: false}}  # the night replayed here is bought call by call
"""
TASKS = """
tasks:
  - id: calc
    reference: legacy/calc.py
    tests: acceptance/test_calc.py
    output: out/calc_service.py
"""


@pytest.fixture(autouse=True)
def restore_logging():
    """A run configures structlog to write its events file; undo that for later tests."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture
def task_list(task_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """conftest's calc task with a live config; fake keys, and no proxy for the fakes."""
    for name in ("ANTHROPIC_AUTH_TOKEN", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-REPLAYFAKEKEYREPLAY")
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyREPLAYFAKEFAKEFAKEFAKEFAKE0000")
    write(task_dir / "harness.yaml", CONFIG)
    return write(task_dir / "tasks.yaml", TASKS)


def replay_of(task_list: Path, night: Path) -> tuple[int, dict, Path]:
    runs = task_list.parent / "replay"
    return run(task_list, runs, "--provider", "replay", "--replay-from", str(night))


def run(task_list: Path, runs: Path, *extra: str) -> tuple[int, dict, Path]:
    config = str(task_list.parent / "harness.yaml")
    argv = ["run", str(task_list), "--run-dir", str(runs), "--config", config]
    code = main([*argv, "--log-level", "error", *extra])
    root = (runs / "latest").resolve()
    return code, json.loads((root / "summary.json").read_text()), root


def attempts(summary: dict) -> list[tuple]:
    """What a replay must reproduce: each attempt's kind, test counts and revert, per task."""
    keys = ("n", "kind", "passed", "failed", "errors", "total", "regressed", "review")
    return [
        (
            t["id"],
            t["status"],
            t["best_attempt"],
            [tuple(a[k] for k in keys) for a in t["attempts"]],
        )
        for t in summary["tasks"]
    ]


@pytest.fixture
def live_night(task_list: Path, monkeypatch: pytest.MonkeyPatch):
    """A live-path night: write (half right), review CLEAN, fix (all right); then the fake
    servers are stopped. Yields (summary, run folder, shipped code, requests made)."""
    with FakeLLMServer() as anthropic, FakeLLMServer() as gemini:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.url)
        anthropic.script(
            anthropic_sse(f"```python\n{HALF}```\n", model=MID, output_tokens=300),
            anthropic_sse(f"Fixed.\n\n```python\n{WHOLE}```\n", model=MID, output_tokens=320),
        )
        gemini.script(gemini_reply("CLEAN", model_version=CHEAP))
        code, summary, root = run(task_list, task_list.parent / "live", "--provider", "live")
        requests = len(anthropic.requests) + len(gemini.requests)
    assert (code, requests) == (0, 3)
    shipped = (task_list.parent / "out" / "calc_service.py").read_text()
    (task_list.parent / "out" / "calc_service.py").unlink()
    yield summary, root, shipped


def test_replay_of_a_live_night_reproduces_it_for_nothing(task_list, live_night):
    """Same attempts, passes and shipped file as the live night; no request, $0 in all."""
    live, live_root, shipped = live_night

    code, replay, root = replay_of(task_list, live_root)

    rows = db_rows(root.parent / "harness.db", "SELECT provider, cost_usd FROM calls")
    assert (code, replay["provider"], replay["budget"]["spent_usd"]) == (0, "replay", 0.0)
    assert attempts(live) == attempts(replay)
    assert [(a["n"], a["kind"]) for a in live["tasks"][0]["attempts"]] == [(1, "write"), (2, "fix")]
    assert shipped == (task_list.parent / "out" / "calc_service.py").read_text() == WHOLE
    assert [(p, Decimal(c)) for p, c in rows] == [("replay", Decimal(0))] * 3


def test_a_call_the_night_did_not_make_is_an_error_naming_its_key(task_list, live_night, capsys):
    """Changed instructions change the write prompt: the task errors, naming task, step,
    attempt and prompt hash; nothing is invented, nothing spent."""
    _, live_root, _ = live_night
    task_list.write_text(TASKS + '    instructions: "Keep it short."\n')

    code, replay, _ = replay_of(task_list, live_root)

    (task,) = replay["tasks"]
    assert (code, task["status"], task["attempts"]) == (1, "error", [])
    assert "no recorded reply for task calc, step write, attempt 1, prompt sha256" in task["reason"]
    assert live_root.name in task["reason"]


def test_replay_needs_a_recorded_run(task_list, tmp_path, capsys):
    """No --replay-from, or a run without call records: exit 2 before anything runs."""
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "summary.json").write_text("{}")

    missing = main(["run", str(task_list), "--provider", "replay"])
    first = capsys.readouterr().err
    empty = main(
        ["run", str(task_list), "--provider", "replay", "--replay-from", str(tmp_path / "old")]
    )
    second = capsys.readouterr().err

    assert (missing, empty) == (2, 2)
    assert "--replay-from RUN" in first
    assert "no call records" in second


def test_replay_of_a_simulated_night_with_reverts(example_nights, tmp_path):
    """The example's seed-2 night (reverted regressions included) replays attempt for attempt;
    --replay-loose covers test output that Python's hash seed orders differently each run."""
    night = example_nights(2)
    recorded = json.loads((night / "summary.json").read_text())
    tasks = night.parent.parent / "example" / "tasks.yaml"

    code, replay, _ = run_sim_replay(tasks, tmp_path / "replay", night)

    assert attempts(recorded) == attempts(replay)
    assert (code, replay["budget"]["spent_usd"]) == (1, 0.0)


def run_sim_replay(tasks: Path, runs: Path, night: Path) -> tuple[int, dict, Path]:
    argv = [
        "run",
        str(tasks),
        "--run-dir",
        str(runs),
        "--provider",
        "replay",
        "--log-level",
        "error",
    ]
    code = main([*argv, "--replay-from", str(night), "--replay-loose"])
    root = (runs / "latest").resolve()
    return code, json.loads((root / "summary.json").read_text()), root


# The provider and the recording on their own.

ROUTE = Route("mid", "replay", MID, 1000)


def request(variable: str = "fix this", attempt: int = 2) -> CallRequest:
    return CallRequest(ROUTE, Prompt("sys", "stable", variable), "calc", "fix", attempt)


def recorded(
    req: CallRequest, text: str = "reply", stop: StopReason = StopReason.END
) -> RecordedCall:
    completion = Completion(text, Usage(10, 0, 0, 20), stop, MID, "anthropic", detail="why")
    return RecordedCall(CallKey.of(req), req.prompt, completion)


def test_strict_replay_refuses_a_changed_prompt_and_loose_serves_it():
    """Same task, step and attempt with another prompt: an error strictly, the reply loosely."""
    calls = [recorded(request())]

    with pytest.raises(ProviderError, match="different prompt"):
        ReplayProvider(calls, "r1").complete(request("fix that"))
    loose = ReplayProvider(calls, "r1", loose=True).complete(request("fix that"))

    assert ("reply", Usage(), "replay") == (loose.text, loose.usage, loose.provider)


def test_a_recorded_failure_replays_as_a_provider_error():
    """A call whose tries all failed that night fails again, with the vendor's words."""
    calls = [recorded(request(), "", StopReason.ERROR)]

    with pytest.raises(ProviderError, match=r"recorded failure .* why"):
        ReplayProvider(calls, "r1").complete(request())


def test_recorded_prompts_read_back_exactly_even_holding_the_marker_lines(tmp_path):
    """A prompt whose parts contain the file's own marker lines splits back exactly."""
    tricky = Prompt("sys\n<!-- stable -->\n", "code <!-- variable -->\nmore", "\n<!-- system -->\n")
    req = CallRequest(ROUTE, tricky, "calc", "write", 1)
    done = Completion("the reply", Usage(1, 2, 3, 4), StopReason.MAX_TOKENS, MID, "anthropic")

    RunDir(tmp_path, "r1").record_call(req, done, Decimal("0.5"))
    (call,) = read_calls(tmp_path / "r1")

    assert (CallKey.of(req), tricky, done) == (call.key, call.prompt, call.completion)


NOISY_TEST = """

class Box:
    pass


def test_sub_reports_noise():
    words = {"alpha", "beta", "gamma", "delta", "epsilon"}
    assert sub(5, 3) == 2, f"{Box()} at {hex(id(words))} {words}"
"""


def test_strict_replay_reproduces_a_night_whose_failures_print_object_reprs(
    task_list: Path, monkeypatch: pytest.MonkeyPatch
):
    """A failure message with an object address and a hash-ordered set: the fix prompt is
    the same in the replay (addresses normalised, the sandbox's hash seed fixed), so a strict
    replay, without --replay-loose, reproduces every attempt at $0."""
    tests = task_list.parent / "acceptance" / "test_calc.py"
    tests.write_text(tests.read_text() + NOISY_TEST)
    with FakeLLMServer() as anthropic, FakeLLMServer() as gemini:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.url)
        anthropic.script(
            anthropic_sse(f"```python\n{HALF}```\n", model=MID, output_tokens=300),
            anthropic_sse(f"Fixed.\n\n```python\n{WHOLE}```\n", model=MID, output_tokens=320),
        )
        gemini.script(gemini_reply("CLEAN", model_version=CHEAP))
        _, live, live_root = run(task_list, task_list.parent / "live", "--provider", "live")
    fix_prompt = (live_root / "calls" / "calc" / "2-fix.prompt.md").read_text()

    code, replay, _ = replay_of(task_list, live_root)

    assert "object at 0x…" in fix_prompt
    assert (code, replay["budget"]["spent_usd"]) == (0, 0.0)
    assert attempts(live) == attempts(replay)


def test_a_gateway_that_answers_a_batch_request_with_garbage_is_a_provider_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A gateway whose answer to creating or reading a batch is JSON but no batch (a bare
    string): the real SDK hands the adapter a str, and the adapter says so as a provider
    error (which sends the entries interactive), never an AttributeError out of the night."""
    import http.server
    import threading

    from harness.llm import BatchHandle, BatchItem, ProviderError
    from harness.providers.anthropic_batch import AnthropicBatches
    from tests.providers.test_anthropic import request as make_request

    class Garbage(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = b'"not a batch"'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    try:
        vendor = AnthropicBatches("sk-ant-api03-GARBAGEFAKEKEYGARBAGE", timeout_s=5)
        with pytest.raises(ProviderError):
            vendor.submit([BatchItem("c1", make_request())], display_name="night #1")
        with pytest.raises(ProviderError):
            vendor.status(BatchHandle("b1", "anthropic", "m", "night #1", 0.0))
    finally:
        server.shutdown()
