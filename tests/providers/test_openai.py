"""The OpenAI adapter through the real `openai` SDK against the local fake Chat Completions
server: usage, streaming, the compatible servers' differences, errors, tools and batches."""

from __future__ import annotations

import json

import pytest

from harness.llm import (
    AuthenticationError,
    BatchItem,
    BatchState,
    CallRequest,
    EntryOutcome,
    ErrorKind,
    Prompt,
    ProviderError,
    Route,
    ServiceTier,
    StopReason,
    ToolCall,
    ToolResult,
    ToolRound,
    ToolSpec,
    Usage,
    decode_tool_turn,
)
from harness.providers import AccountError, Endpoint, build_adapter
from harness.providers.openai import STREAM_ABOVE_TOKENS, OpenAIProvider
from harness.providers.openai_batch import OpenAIBatches
from tests.fakebatch import BatchScript, EntryScript
from tests.fakeserver import (
    FakeLLMServer,
    openai_base,
    openai_error,
    openai_reply,
    openai_sse,
)

KEY = "gw-test-key-0123456789abcdef"
PROMPT = Prompt("You port code.", "REFERENCE AND TESTS\n", "attempt 1")
SHORT, LONG = STREAM_ABOVE_TOKENS, 32000


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        yield fake


def endpoint(server: FakeLLMServer, key: str = KEY) -> OpenAIProvider:
    named = Endpoint("gw", openai_base(server), "GW_KEY")
    return OpenAIProvider(named, key, timeout_s=10, key_source="GW_KEY")


def request(max_tokens: int = SHORT, provider: str = "gw", **extra) -> CallRequest:
    route = Route("mid", provider, "qwen3-coder", max_tokens)
    return CallRequest(route, PROMPT, "calc", "write", 1, **extra)


def test_a_plain_reply_splits_cached_tokens_out_of_the_prompt(server):
    """prompt_tokens includes the cached ones: fresh input is the difference."""
    server.script(openai_reply("CLEAN", prompt=1000, cached=600, completion=40))

    done = endpoint(server).complete(request())

    assert (done.text, done.stop_reason) == ("CLEAN", StopReason.END)
    assert done.usage == Usage(input_tokens=400, cache_read_tokens=600, output_tokens=40)


def test_a_server_without_prompt_tokens_details_bills_all_input_fresh(server):
    """No prompt_tokens_details (vLLM, Ollama): every prompt token is fresh input."""
    server.script(openai_reply("CLEAN", prompt=1000, cached=None, completion=40))

    done = endpoint(server).complete(request())

    assert done.usage == Usage(input_tokens=1000, output_tokens=40)


def test_a_long_call_streams_and_asks_for_usage(server):
    """Above the streaming threshold the call is a stream with stream_options.include_usage,
    and the usage chunk is read."""
    server.script(openai_sse("def add(a, b):\n    return a + b\n", prompt=90, cached=10, pieces=5))

    done = endpoint(server).complete(request(LONG))

    body = server.requests[0].json
    assert (body["stream"], body["stream_options"]) == (True, {"include_usage": True})
    assert done.text == "def add(a, b):\n    return a + b\n"
    assert done.usage == Usage(input_tokens=80, cache_read_tokens=10, output_tokens=5)


def test_a_short_call_is_one_plain_request(server):
    """At or below the threshold nothing is streamed."""
    server.script(openai_reply("CLEAN"))

    endpoint(server).complete(request(SHORT))

    assert "stream" not in server.requests[0].json


def test_finish_reason_length_is_an_outcome_not_an_exception(server):
    """finish_reason length (streamed or not) is MAX_TOKENS with its usage, never a crash."""
    server.script(openai_reply("def f(", finish="length"), openai_sse("def f(", finish="length"))

    plain = endpoint(server).complete(request(SHORT))
    streamed = endpoint(server).complete(request(LONG))

    assert (plain.stop_reason, streamed.stop_reason) == (StopReason.MAX_TOKENS,) * 2
    assert (plain.usage.output_tokens, streamed.usage.output_tokens) == (5, 5)


def test_a_server_that_ignores_max_tokens_is_cut_off(server):
    """A stream sending far more pieces than max_tokens allows is closed: MAX_TOKENS, said why."""
    server.script(openai_sse("x" * 6000, pieces=6000))

    done = endpoint(server).complete(request(5000))

    assert done.stop_reason is StopReason.MAX_TOKENS
    assert "ignores max_tokens" in done.detail
    assert len(done.text) < 6000


def test_a_stream_without_usage_reports_none(server):
    """A server that ignores stream_options sends no usage: zero, for the caller to judge."""
    server.script(openai_sse("CLEAN", usage=False))

    done = endpoint(server).complete(request(LONG))

    assert (done.text, done.usage) == ("CLEAN", Usage())


def test_a_named_endpoint_sends_its_own_key_and_nothing_of_openais(server, monkeypatch):
    """A named endpoint sends its key as the bearer, max_tokens, and no OpenAI key,
    organization or project, even when those are set."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-should-stay-home-000000000000")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-home")
    monkeypatch.setenv("GW_KEY", KEY)
    server.script(openai_reply("CLEAN"))
    named = Endpoint("gw", openai_base(server), "GW_KEY")

    build_adapter("gw", timeout_s=10, endpoints={"gw": named}).complete(request())

    seen = server.requests[0]
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert "openai-organization" not in seen.headers
    assert (seen.json["model"], seen.json["max_tokens"]) == ("qwen3-coder", SHORT)
    assert "max_completion_tokens" not in seen.json


def test_an_endpoint_without_a_key_variable_never_sends_openais_key(server, monkeypatch):
    """No api_key_env (a local server): OPENAI_API_KEY is not read, a placeholder goes."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-should-stay-home-000000000000")
    server.script(openai_reply("CLEAN"))
    local = Endpoint("local", openai_base(server), None)

    build_adapter("local", timeout_s=10, endpoints={"local": local}).complete(request())

    assert "sk-openai" not in server.requests[0].headers["authorization"]


def test_the_builtin_endpoint_reads_openai_variables_and_sends_max_completion_tokens(
    server, monkeypatch
):
    """`openai` takes OPENAI_API_KEY and OPENAI_BASE_URL, sends max_completion_tokens and a
    prompt cache key that is the same for every attempt of a task."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_base(server))
    server.script(openai_reply("A"), openai_reply("B"))
    adapter = build_adapter("openai", timeout_s=10)
    first = request(provider="openai")
    second = CallRequest(first.route, Prompt(PROMPT.system, PROMPT.stable, "attempt 2"), "calc",
                         "fix", 2)  # fmt: skip

    adapter.complete(first)
    adapter.complete(second)

    one, two = (r.json for r in server.requests)
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert (one["max_completion_tokens"], "max_tokens" in one) == (SHORT, False)
    assert one["prompt_cache_key"] == two["prompt_cache_key"]
    assert one["messages"][1]["content"].startswith(PROMPT.stable)  # the stable prefix first


def test_a_missing_key_names_the_endpoints_variable(monkeypatch):
    """An endpoint whose api_key_env is unset in the environment is a start-up error."""
    monkeypatch.delenv("GW_KEY", raising=False)
    named = Endpoint("gw", "http://127.0.0.1:9/v1", "GW_KEY")

    with pytest.raises(ValueError, match="GW_KEY"):
        build_adapter("gw", timeout_s=10, endpoints={"gw": named})


@pytest.mark.parametrize(
    ("reply", "kind", "error"),
    [
        (openai_error(401, "Incorrect API key", code="invalid_api_key"), ErrorKind.AUTH,
         AuthenticationError),
        (openai_error(429, "You exceeded your current quota", error_type="insufficient_quota",
                      code="insufficient_quota"), ErrorKind.AUTH, AccountError),
        (openai_error(429, "Rate limit reached", error_type="requests",
                      code="rate_limit_exceeded", headers={"retry-after-ms": "250"}),
         ErrorKind.RATE_LIMIT, ProviderError),
        (openai_error(500, "server error", error_type="server_error"), ErrorKind.TRANSIENT,
         ProviderError),
        (openai_error(404, "The model does not exist", code="model_not_found"), ErrorKind.FATAL,
         ProviderError),
    ],
    ids=["401", "insufficient-quota", "429", "500", "404"],
)  # fmt: skip
def test_errors_are_classified_for_the_retry_policy(server, reply, kind, error):
    """Key refused and out of quota halt; rate limits and 5xx retry; the rest do not."""
    server.script(reply)

    with pytest.raises(ProviderError) as raised:
        endpoint(server).complete(request())

    assert (raised.value.kind, type(raised.value)) == (kind, error)
    assert KEY not in str(raised.value)
    if kind is ErrorKind.RATE_LIMIT:
        assert raised.value.retry_after_s == 0.25


@pytest.mark.parametrize(
    "reply",
    [
        openai_error(400, "This model's maximum context length is 8192 tokens. However, you "
                     "requested 9000 tokens", code="context_length_exceeded"),
        openai_error(400, "the request exceeds the available context size, try increasing it"),
    ],
    ids=["openai-vllm", "llama.cpp"],
)  # fmt: skip
def test_a_prompt_too_long_is_an_outcome(server, reply):
    """The servers' ways of saying the prompt does not fit end as CONTEXT_TOO_LONG."""
    server.script(reply)

    done = endpoint(server).complete(request())

    assert done.stop_reason is StopReason.CONTEXT_TOO_LONG


def test_an_error_inside_a_stream_is_an_unknown_outcome(server):
    """An error event mid-stream is retried as transient, marked as possibly billed."""
    server.script(openai_sse("partial", upto=2, error={"message": "overloaded", "type": "x"}))

    with pytest.raises(ProviderError) as raised:
        endpoint(server).complete(request(LONG))

    assert (raised.value.kind, raised.value.outcome_unknown) == (ErrorKind.TRANSIENT, True)


def test_a_cut_stream_is_an_unknown_outcome(server):
    """A connection dropped mid-stream is retried and charged its reservation."""
    server.script(openai_sse("partial answer", upto=2, cut=True))

    with pytest.raises(ProviderError) as raised:
        endpoint(server).complete(request(LONG))

    assert raised.value.outcome_unknown


def test_a_refusal_is_an_outcome(server):
    """message.refusal is a REFUSAL with the model's words, never a file to ship."""
    server.script(openai_reply(None, refusal="I can't help with that."))

    done = endpoint(server).complete(request())

    assert (done.stop_reason, done.detail) == (StopReason.REFUSAL, "I can't help with that.")


TOOLS = (ToolSpec("read_file", "Read a file.", json.dumps({"type": "object"})),)


def test_native_tool_calls_stream_into_a_tool_turn_and_rounds_go_back(server):
    """Streamed tool-call pieces become a TOOL_USE turn; the next call sends the assistant
    turn and one tool message per result, with tool_choice none on the final call."""
    calls = [("call_1", "read_file", {"path": "legacy/helpers.py"})]
    server.script(openai_sse("", calls=calls, finish="tool_calls"), openai_reply("done"))
    adapter = endpoint(server)

    turn = adapter.complete(request(LONG, tools=TOOLS))
    text, parsed = decode_tool_turn(turn.text)
    round_ = ToolRound(text, parsed, (ToolResult("call_1", "read_file", "def helper(): ..."),))
    adapter.complete(request(SHORT, tools=TOOLS, rounds=(round_,), tools_final=True))

    sent = server.requests[1].json
    assert turn.stop_reason is StopReason.TOOL_USE
    assert parsed == (ToolCall("call_1", "read_file", '{"path": "legacy/helpers.py"}'),)
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    assert sent["messages"][2]["tool_calls"][0]["id"] == "call_1"
    assert sent["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "def helper(): ...",
    }
    assert (sent["tool_choice"], sent["tools"][0]["function"]["name"]) == ("none", "read_file")


def batches(server: FakeLLMServer) -> OpenAIBatches:
    builtin = Endpoint("openai", openai_base(server), "OPENAI_API_KEY", builtin=True)
    return OpenAIBatches(builtin, KEY, timeout_s=10, key_source="OPENAI_API_KEY")


def batch_item(custom_id: str) -> BatchItem:
    route = Route("mid", "openai", "gpt-5.2", 32000, ServiceTier.BATCH)
    return BatchItem(custom_id, CallRequest(route, PROMPT, custom_id, "write", 1))


def test_a_batch_is_uploaded_polled_and_read_back_at_the_batch_tier(server):
    """Submit uploads one JSONL file of Chat Completions bodies; results come from the
    output and error files, matched by custom_id, completions at the batch tier."""
    server.batches.script(
        BatchScript(polls=2, entries={"b": EntryScript("errored", error="bad request")})
    )
    vendor = batches(server)

    handle = vendor.submit([batch_item("a"), batch_item("b")], display_name="run-1")
    first, second = vendor.status(handle), vendor.status(handle)
    entries = {e.custom_id: e for e in vendor.results(handle)}

    upload = next(iter(server.batches.uploads.values())).decode().splitlines()
    line = json.loads(upload[0])
    assert (line["url"], line["body"]["model"]) == ("/v1/chat/completions", "gpt-5.2")
    assert (first.state, second.state) == (BatchState.RUNNING, BatchState.ENDED)
    assert (second.succeeded, second.errored) == (1, 1)
    assert entries["a"].outcome is EntryOutcome.SUCCEEDED
    assert entries["a"].completion.service_tier is ServiceTier.BATCH
    assert entries["a"].completion.usage == Usage(input_tokens=100, output_tokens=50)
    assert (entries["b"].outcome, entries["b"].error) == (EntryOutcome.ERRORED, "400: bad request")
    assert [h.id for h in vendor.find("run-1")] == [handle.id]


def test_a_cancelled_batch_reports_unrun_entries_as_canceled(server):
    """Cancel ends the batch; entries that never ran come back canceled, billed nothing."""
    server.batches.script(BatchScript(polls=None))
    vendor = batches(server)
    handle = vendor.submit([batch_item("a")], display_name="run-2")

    vendor.cancel(handle)
    status = vendor.status(handle)
    entries = list(vendor.results(handle))

    assert (status.state, status.canceled) == (BatchState.ENDED, 1)
    assert [(e.custom_id, e.outcome) for e in entries] == [("a", EntryOutcome.CANCELED)]
    assert server.batches.billed == []
