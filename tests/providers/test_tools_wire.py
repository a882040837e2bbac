"""Context tools on the wire: the real anthropic and google-genai SDKs against the fake server."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness.context import TOOLS
from harness.llm import (
    CallRequest,
    Prompt,
    Route,
    StopReason,
    ToolResult,
    ToolRound,
    decode_tool_turn,
)
from harness.providers.anthropic import AnthropicProvider
from harness.providers.gemini import GeminiProvider
from tests.fakeserver import (
    FakeLLMServer,
    anthropic_sse,
    anthropic_tool_sse,
    gemini_call_reply,
    gemini_reply,
)

PROMPT = Prompt("sys", "stable part", "variable part")
# Today's bodies (captured from the adapters before context tools existed): a request
# without tools must reach the vendor as exactly these bytes.
ANTHROPIC_TODAY = (
    b'{"max_tokens":1000,"messages":[{"role":"user","content":[{"type":"text","text":'
    b'"stable part","cache_control":{"type":"ephemeral"}},{"type":"text","text":'
    b'"variable part"}]}],"model":"claude-x","system":[{"type":"text","text":"sys"}],'
    b'"stream":true}'
)
GEMINI_TODAY = (
    b'{"contents": [{"parts": [{"text": "stable part"}, {"text": "variable part"}], "role": '
    b'"user"}], "systemInstruction": {"parts": [{"text": "sys"}], "role": "user"}, '
    b'"generationConfig": {"candidateCount": 1, "maxOutputTokens": 1000}}'
)
CODE = "```python\ndef add(a, b):\n    return a + b\n```\n"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    """One fake vendor, reached through both SDKs' base-URL variables."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    for name in ("ANTHROPIC_AUTH_TOKEN", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with FakeLLMServer() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        yield fake


def request(provider: str, **tools: object) -> CallRequest:
    return CallRequest(Route("mid", provider, "claude-x", 1000), PROMPT, "t", "fix", 2, **tools)


def answered(first: CallRequest, text: str, content: str) -> CallRequest:
    """The next round: the first reply's turn, each call answered with `content`."""
    turn, calls = decode_tool_turn(text)
    results = tuple(ToolResult(c.id, c.name, content) for c in calls)
    return dataclasses.replace(first, rounds=(ToolRound(turn, calls, results),), tools_final=True)


def test_anthropic_request_without_tools_is_todays_bytes(server):
    """Context tools off: the Anthropic body is byte-identical to today's, with no tools key."""
    server.script(anthropic_sse("x"))

    AnthropicProvider("k", timeout_s=5).complete(request("anthropic"))

    assert server.requests[0].body == ANTHROPIC_TODAY


def test_gemini_request_without_tools_is_todays_bytes(server):
    """Context tools off: the Gemini body is byte-identical to today's, with no tools key."""
    server.script(gemini_reply("x"))

    GeminiProvider("k", timeout_s=5).complete(request("gemini"))

    assert server.requests[0].body == GEMINI_TODAY


def test_anthropic_fix_asks_for_a_file_then_answers_with_code(server):
    """Round 2 replays the signed assistant turn verbatim, answers its id, keeps the tools."""
    server.script(
        anthropic_tool_sse([("toolu_01", "read_file", {"path": "lib/helper.py"})]),
        anthropic_sse(CODE),
    )
    provider = AnthropicProvider("k", timeout_s=5)
    first = request("anthropic", tools=TOOLS)

    asked = provider.complete(first)
    final = provider.complete(answered(first, asked.text, "def helper(): ..."))

    one, two = (s.json for s in server.requests)
    replayed, results = two["messages"][1], two["messages"][2]
    assert (asked.stop_reason, final.stop_reason) == (StopReason.TOOL_USE, StopReason.END)
    assert {"role": "assistant", "content": json.loads(decode_tool_turn(asked.text)[0])} == replayed
    assert replayed["content"][0] == {
        "type": "thinking", "thinking": "I need the helper module.", "signature": "sig-Zm9vYmFy"
    }  # fmt: skip
    assert replayed["content"][1]["id"] == results["content"][0]["tool_use_id"] == "toolu_01"
    assert (one["tools"], one["tool_choice"], two["tool_choice"]) == (
        two["tools"], {"type": "auto"}, {"type": "none"}
    )  # fmt: skip
    assert "def add" in final.text


def test_gemini_fix_asks_for_a_file_then_answers_with_code(server):
    """Round 2 replays the model turn with its thought signature, ids match, tools the same."""
    server.script(
        gemini_call_reply([("call-7", "read_file", {"path": "lib/helper.py"})]),
        gemini_reply(CODE),
    )
    provider = GeminiProvider("k", timeout_s=5)
    first = request("gemini", tools=TOOLS)

    asked = provider.complete(first)
    final = provider.complete(answered(first, asked.text, "def helper(): ..."))

    one, two = (s.json for s in server.requests)
    replayed, results = two["contents"][1], two["contents"][2]
    modes = [b["toolConfig"]["functionCallingConfig"]["mode"] for b in (one, two)]
    assert (asked.stop_reason, final.stop_reason) == (StopReason.TOOL_USE, StopReason.END)
    assert replayed == {
        "role": "model",
        "parts": [
            {
                "functionCall": {
                    "id": "call-7",
                    "name": "read_file",
                    "args": {"path": "lib/helper.py"},
                },
                "thoughtSignature": "c2lnbmVkLXRob3VnaHQ=",
            }
        ],
    }
    response = results["parts"][0]["functionResponse"]
    assert (response["id"], response["name"]) == ("call-7", "read_file")
    assert response["response"] == {"output": "def helper(): ..."}
    assert (one["tools"], modes) == (two["tools"], ["AUTO", "NONE"])
    assert "def add" in final.text
