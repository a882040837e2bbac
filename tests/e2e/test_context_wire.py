"""End to end with context tools on: `harness run --provider live` against the fake vendors,
through the real anthropic and google-genai SDKs; a fix step asks for a file, then answers."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from harness.cli import main
from harness.llm import Usage
from harness.pricing import cost, load_prices
from harness.results import usd
from tests.conftest import write
from tests.e2e import test_providers_wire as wire
from tests.e2e.test_providers_wire import CHEAP, MID, SOLUTION, run_live
from tests.fakeserver import (
    anthropic_sse,
    anthropic_tool_sse,
    gemini_call_reply,
    gemini_reply,
)

pytestmark = pytest.mark.slow
servers, restore_logging = wire.servers, wire.restore_logging  # the same fake vendors

HELPER = "def helper():\n    return 'the sibling module the task list forgot'\n"
BROKEN = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"


def fenced(code: str) -> str:
    return f"```python\n{code}```\n"


def task_list(task_dir: Path, tier: str) -> Path:
    """The calc task with a forgotten helper beside it; write and fix on `tier`, tools on."""
    write(task_dir / "lib" / "helper.py", HELPER)
    write(
        task_dir / "harness.yaml",
        f"""
        routes:
          cheap: {{provider: gemini, model: {CHEAP}, max_tokens: 16384}}
          mid: {{provider: anthropic, model: {MID}, max_tokens: 32000}}
          frontier: {{provider: anthropic, model: claude-opus-5-5, max_tokens: 64000}}
        steps: {{write: {tier}, review: cheap, rewrite: {tier}, fix: {tier}}}
        provider_timeout_s: 30
        loop: {{review: false, context_tools: {{enabled: true}}}}
        """,
    )
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


def priced(bills: list, model: str) -> Decimal:
    price = load_prices().get(model)
    return sum((cost(Usage(*bill), price) for _, bill in bills), Decimal(0))


def test_anthropic_fix_reads_a_file_and_answers_with_code(servers, task_dir):
    """The fix's second request replays the signed turn, answers its id; bills = summary."""
    anthropic, gemini = servers
    anthropic.script(
        anthropic_sse(fenced(BROKEN), model=MID, input_tokens=900, output_tokens=60),
        anthropic_tool_sse(
            [("toolu_7", "read_file", {"path": "lib/helper.py"})],
            model=MID,
            input_tokens=1100,
            output_tokens=40,
        ),
        anthropic_sse(fenced(SOLUTION), model=MID, input_tokens=1300, output_tokens=70),
    )

    code, summary, events = run_live(task_list(task_dir, "mid"))

    write_body, ask_body, answer_body = (r.json for r in anthropic.requests)
    turn, results = answer_body["messages"][1], answer_body["messages"][2]
    reads = [e for e in events if e["event"] == "context_request"]
    assert (code, summary["tasks"][0]["status"], len(gemini.requests)) == (0, "passed", 0)
    assert turn["content"][0]["signature"] == "sig-Zm9vYmFy"
    assert turn["content"][1] == {
        "type": "tool_use", "id": "toolu_7", "name": "read_file", "input": {"path": "lib/helper.py"}
    }  # fmt: skip
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_7", "content": HELPER}
    ]
    assert write_body["tools"] == ask_body["tools"] == answer_body["tools"]
    assert [(e["tool"], e["path"], e["ok"], e["bytes"]) for e in reads] == [
        ("read_file", "lib/helper.py", True, len(HELPER))
    ]
    assert usd(priced(anthropic.bills, MID)) == summary["budget"]["spent_usd"]


def test_gemini_fix_reads_a_file_and_answers_with_code(servers, task_dir):
    """The fix's second request replays the turn with its thought signature; bills = summary."""
    anthropic, gemini = servers
    gemini.script(
        gemini_reply(fenced(BROKEN), model_version=CHEAP, prompt=900, candidates=60),
        gemini_call_reply(
            [("call-3", "read_file", {"path": "lib/helper.py"})],
            model_version=CHEAP,
            prompt=1100,
            candidates=40,
            thoughts=25,
        ),
        gemini_reply(fenced(SOLUTION), model_version=CHEAP, prompt=1300, candidates=70),
    )

    code, summary, events = run_live(task_list(task_dir, "cheap"))

    write_body, ask_body, answer_body = (r.json for r in gemini.requests)
    turn, results = answer_body["contents"][1], answer_body["contents"][2]
    response = results["parts"][0]["functionResponse"]
    assert (code, summary["tasks"][0]["status"], len(anthropic.requests)) == (0, "passed", 0)
    assert turn["parts"][0]["thoughtSignature"] == "c2lnbmVkLXRob3VnaHQ="
    assert turn["parts"][0]["functionCall"]["id"] == response["id"] == "call-3"
    assert response["response"] == {"output": HELPER}
    assert write_body["tools"] == ask_body["tools"] == answer_body["tools"]
    assert [e["ok"] for e in events if e["event"] == "context_request"] == [True]
    assert usd(priced(gemini.bills, CHEAP)) == summary["budget"]["spent_usd"]


def test_replay_serves_the_recorded_tool_results_with_the_read_file_deleted(servers, task_dir):
    """`--provider replay` of a tool-using night, its read file deleted: same code shipped,
    the tool result served from the recording, not the disk."""
    anthropic, _ = servers
    anthropic.script(
        anthropic_sse(fenced(BROKEN), model=MID),
        anthropic_tool_sse([("toolu_7", "read_file", {"path": "lib/helper.py"})], model=MID),
        anthropic_sse(fenced(SOLUTION), model=MID),
    )
    tasks = task_list(task_dir, "mid")
    _, night, _ = run_live(tasks)
    shipped = Path(night["tasks"][0]["output"]).read_text()
    (task_dir / "lib" / "helper.py").unlink()
    Path(night["tasks"][0]["output"]).unlink()

    code = main(
        ["run", str(tasks), "--provider", "replay", "--replay-from", night["run_id"],
         "--run-dir", str(task_dir / "runs"), "--config", str(task_dir / "harness.yaml")]
    )  # fmt: skip

    root = (task_dir / "runs" / "latest").resolve()
    events = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    reads = [(e["ok"], e["bytes"]) for e in events if e["event"] == "context_request"]
    assert (code, len(anthropic.requests)) == (0, 3)
    assert (Path(night["tasks"][0]["output"]).read_text(), reads) == (
        shipped,
        [(True, len(HELPER))],
    )
