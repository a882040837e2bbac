"""AnthropicProvider behind the Caller, through the real SDK client, against a local fake API."""

from __future__ import annotations

import socket
from decimal import Decimal

import pytest
from structlog.testing import capture_logs

from harness.calls import RetryPolicy
from harness.calls.tries import worst_case
from harness.llm import (
    AuthenticationError,
    CallRequest,
    ErrorKind,
    Prompt,
    ProviderError,
    Route,
    StopReason,
    Usage,
)
from harness.pricing import Price, cost
from harness.providers import AccountError, MissingKeyError
from harness.providers.anthropic import AnthropicProvider
from tests.conftest import Calls, call_in_thread, calls_over, fixture_prices
from tests.fakeserver import FakeLLMServer, Reply, anthropic_error, anthropic_sse, json_reply

KEY = "sk-ant-api03-FAKEKEYFAKEKEYFAKEKEY"
FAST = RetryPolicy(
    max_attempts=3, max_total_s=30, max_wait_s=0.05, backoff_base_s=0.001, backoff_max_s=0.01
)


def request(
    *,
    max_tokens: int = 32_000,
    variable: str = "FAILING TESTS",
    attempt: int = 1,
    prompt: Prompt | None = None,
) -> CallRequest:
    route = Route("mid", "anthropic", "claude-sonnet-5-5", max_tokens)
    prompt = prompt or Prompt("SYSTEM RULES", "REFERENCE AND TESTS", variable)
    return CallRequest(route, prompt, "orders", "fix", attempt)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with FakeLLMServer() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        yield fake


@pytest.fixture
def raw(server: FakeLLMServer) -> AnthropicProvider:
    return AnthropicProvider(KEY, timeout_s=5, key_source="ANTHROPIC_API_KEY")


@pytest.fixture
def call(raw: AnthropicProvider) -> Calls:
    """The production path: the Caller (reserve, retry, settle, record) over the adapter."""
    return calls_over(raw, FAST)


# --- parsing and cost ----------------------------------------------------------------------


def test_text_and_usage_are_normalised(server, call):
    """Text excludes thinking; usage keeps fresh input, cache write and read apart."""
    server.script(
        anthropic_sse(
            "def handle(): ...",
            thinking="let me think",
            input_tokens=120,
            cache_write=3000,
            cache_read=0,
            output_tokens=900,
        )
    )

    completion = call(request())

    assert ("def handle(): ...", Usage(120, 3000, 0, 900), StopReason.END) == (
        completion.text,
        completion.usage,
        completion.stop_reason,
    )
    assert (completion.provider, completion.model, completion.retries) == (
        "anthropic",
        "claude-sonnet-5-5",
        0,
    )


def test_cache_read_is_reported(server, call):
    """A later attempt that hits the cache reports cache-read tokens, not fresh input."""
    server.script(anthropic_sse(input_tokens=40, cache_read=3000, output_tokens=10))

    usage = call(request(attempt=2)).usage

    assert Usage(40, 0, 3000, 10) == usage


def test_cost_is_exact_decimal(server, call):
    """Cost of a call is exact to the token: fresh, cache write, cache read, output."""
    server.script(
        anthropic_sse(input_tokens=1234, cache_write=20_000, cache_read=7, output_tokens=3001)
    )
    price = Price(
        "claude-sonnet-5-5",
        "anthropic",
        Decimal("2.00"),
        Decimal("10.00"),
        Decimal("2.50"),
        Decimal("0.10"),
    )

    amount = cost(call(request()).usage, price)

    assert Decimal("0.0824787") == amount


# --- the request on the wire ---------------------------------------------------------------


def test_cache_control_marks_only_the_stable_prefix(server, call):
    """cache_control sits on the stable block, never on the per-attempt block or system."""
    server.script(anthropic_sse())

    call(request())

    body = server.requests[0].json
    blocks = body["messages"][0]["content"]
    assert blocks == [
        {"type": "text", "text": "REFERENCE AND TESTS", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "FAILING TESTS"},
    ]
    assert body["system"] == [{"type": "text", "text": "SYSTEM RULES"}]
    assert (body["stream"], body["max_tokens"]) == (True, 32_000)
    assert not {"temperature", "top_p", "top_k"} & body.keys()


def test_prefix_is_byte_identical_across_attempts(server, call):
    """Two attempts of a task send the same system and cached block; only the tail differs."""
    server.script(anthropic_sse(), anthropic_sse())

    call(request(variable="attempt 1 failures", attempt=1))
    call(request(variable="attempt 2 failures", attempt=2))

    first, second = (seen.json for seen in server.requests)
    assert (first["system"], first["messages"][0]["content"][0]) == (
        second["system"],
        second["messages"][0]["content"][0],
    )
    assert first["messages"][0]["content"][1] != second["messages"][0]["content"][1]


def test_empty_parts_are_left_out(server, call):
    """No empty text block is sent (the API rejects them): no stable part, no cache mark."""
    server.script(anthropic_sse())

    call(request(prompt=Prompt("", "", "only this")))

    body = server.requests[0].json
    assert (body["messages"][0]["content"], "system" in body) == (
        [{"type": "text", "text": "only this"}],
        False,
    )


def test_base_url_comes_from_the_environment(server, raw):
    """The SDK reads ANTHROPIC_BASE_URL itself; the request reaches the fake with the key."""
    server.script(anthropic_sse())

    raw.complete(request())

    seen = server.requests[0]
    assert (server.url, "/v1/messages") == (str(raw._client.base_url).rstrip("/"), seen.path)
    assert KEY in seen.headers.get("authorization", "") + seen.headers.get("x-api-key", "")


def test_huge_max_tokens_is_allowed_because_we_stream(server, call):
    """128k max_tokens would be refused by the SDK without streaming; streamed, it is sent."""
    server.script(anthropic_sse())

    call(request(max_tokens=128_000))

    assert server.requests[0].json["max_tokens"] == 128_000


def test_sdk_retries_are_off_and_timeout_is_set(server, raw):
    """max_retries is 0 (one request per call) and the timeout is the one we gave."""
    server.script(anthropic_error(503, "api_error"))

    with pytest.raises(ProviderError):
        raw.complete(request())

    assert (raw._client.max_retries, len(server.requests), raw._client.timeout.read) == (0, 1, 5.0)


# --- outcomes, not crashes -------------------------------------------------------------------


def test_truncation_is_an_outcome(server, call):
    """stop_reason max_tokens is a MAX_TOKENS completion with its usage, not an error."""
    server.script(anthropic_sse("def half(", stop_reason="max_tokens", output_tokens=32_000))

    completion = call(request())

    assert (completion.stop_reason, completion.detail, completion.usage.output_tokens) == (
        StopReason.MAX_TOKENS,
        "max_tokens",
        32_000,
    )


def test_refusal_is_an_outcome_with_details(server, call):
    """A refusal is a REFUSAL completion whose detail carries the category."""
    details = {"type": "refusal", "category": "cyber", "explanation": "exploit code"}
    server.script(anthropic_sse("", stop_reason="refusal", stop_details=details))

    completion = call(request())

    assert (completion.stop_reason, completion.detail) == (
        StopReason.REFUSAL,
        "refusal: cyber exploit code",
    )


def test_context_window_exceeded_stop_is_an_outcome(server, call):
    """Generation that runs into the context window is CONTEXT_TOO_LONG."""
    server.script(anthropic_sse(stop_reason="model_context_window_exceeded"))

    assert call(request()).stop_reason == StopReason.CONTEXT_TOO_LONG


@pytest.mark.parametrize(
    "reply",
    [
        anthropic_error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000"),
        anthropic_error(413, "request_too_large", "Request exceeds the maximum allowed size"),
    ],
)
def test_prompt_too_long_is_an_outcome_not_retried(server, call, reply):
    """A prompt the API will not take is a CONTEXT_TOO_LONG completion, sent once."""
    server.script(reply)

    completion = call(request())

    assert (StopReason.CONTEXT_TOO_LONG, Usage(), 1) == (
        completion.stop_reason,
        completion.usage,
        len(server.requests),
    )


# --- errors and retries ----------------------------------------------------------------------


def test_rate_limit_honours_retry_after_ms(server, call):
    """A 429 is retried after the server's retry-after-ms, and the retry is logged."""
    server.script(
        anthropic_error(429, "rate_limit_error", headers={"retry-after-ms": "1"}), anthropic_sse()
    )

    with capture_logs() as logs:
        completion = call(request())

    retry = [e for e in logs if e["event"] == "call_retry"]
    assert (completion.retries, len(server.requests)) == (1, 2)
    assert [(e["reason"], e["status"], e["wait_s"], e["retry"], e["attempt"]) for e in retry] == [
        ("rate_limit", 429, 0.001, 1, 1)
    ]


def test_overloaded_with_retry_after_waits_the_hint(server, call):
    """A 529 that carries retry-after-ms is retried after that wait, not the backoff."""
    server.script(
        anthropic_error(529, "overloaded_error", headers={"retry-after-ms": "2"}), anthropic_sse()
    )

    with capture_logs() as logs:
        call(request())

    assert [(e["reason"], e["wait_s"]) for e in logs if e["event"] == "call_retry"] == [
        ("transient", 0.002)
    ]


def test_retry_after_is_capped(server, call):
    """A retry-after longer than max_wait_s waits max_wait_s."""
    server.script(
        anthropic_error(429, "rate_limit_error", headers={"retry-after": "3600"}), anthropic_sse()
    )

    with capture_logs() as logs:
        call(request())

    assert [e["wait_s"] for e in logs if e["event"] == "call_retry"] == [0.05]


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (408, "timeout_error"),
        (409, "conflict_error"),
        (500, "api_error"),
        (502, "api_error"),
        (503, "api_error"),
        (504, "timeout_error"),
        (529, "overloaded_error"),
    ],
)
def test_transient_statuses_are_retried(server, call, status, error_type):
    """408, 409, 5xx and 529 overloaded are retried, then the call succeeds."""
    server.script(anthropic_error(status, error_type), anthropic_sse("ok"))

    completion = call(request())

    assert (completion.text, completion.retries, len(server.requests)) == ("ok", 1, 2)


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, "invalid_request_error"),
        (404, "not_found_error"),
        (422, "invalid_request_error"),
    ],
)
def test_client_errors_are_not_retried(server, call, status, error_type):
    """400, 404 and other 4xx are FATAL: one request, no retry."""
    server.script(anthropic_error(status, error_type, "bad request"))

    with pytest.raises(ProviderError) as caught:
        call(request())

    assert (ErrorKind.FATAL, status, 1) == (
        caught.value.kind,
        caught.value.status,
        len(server.requests),
    )


def test_not_found_names_the_model(server, call):
    """A 404 says which model, so a retired model ID is easy to spot."""
    server.script(anthropic_error(404, "not_found_error", "model: claude-sonnet-5-5"))

    with pytest.raises(ProviderError, match=r"claude-sonnet-5-5.*retired"):
        call(request())


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (401, "authentication_error"),
        (403, "permission_error"),
    ],
)
def test_auth_failure_is_not_retried(server, call, status, error_type):
    """401/403 raise AuthenticationError once, naming the variable but never the key."""
    server.script(anthropic_error(status, error_type, "invalid x-api-key"))

    with pytest.raises(AuthenticationError) as caught:
        call(request())

    assert (caught.value.kind, len(server.requests)) == (ErrorKind.AUTH, 1)
    assert "ANTHROPIC_API_KEY" in str(caught.value) and KEY not in str(caught.value)


NO_CREDIT = (
    "Your credit balance is too low to access the Anthropic API. "
    "Please go to Plans & Billing to upgrade or purchase credits."
)


@pytest.mark.parametrize(
    "reply",
    [
        anthropic_error(429, "rate_limit_error", error_code="enforced_spend_limit_reached"),
        anthropic_error(402, "billing_error", "credit balance too low"),
        anthropic_error(400, "invalid_request_error", NO_CREDIT),
    ],
)
def test_account_that_cannot_pay_stops_the_run(server, call, reply):
    """A spend limit, a billing error or the 400 an account out of credit gets is an
    AccountError (an AuthenticationError): no retry, no futile call per task."""
    server.script(reply)

    with pytest.raises(AccountError):
        call(request())

    assert len(server.requests) == 1


def test_should_retry_header_overrides_status(server, call):
    """x-should-retry: false on a 503 is believed: FATAL, one request."""
    server.script(anthropic_error(503, "api_error", headers={"x-should-retry": "false"}))

    with pytest.raises(ProviderError) as caught:
        call(request())

    assert (caught.value.kind, len(server.requests)) == (ErrorKind.FATAL, 1)


def test_retries_are_bounded(server, call):
    """Transient faults stop after max_attempts; the log says how many retries ran."""
    server.script(*[anthropic_error(529, "overloaded_error")] * 5)

    with capture_logs() as logs, pytest.raises(ProviderError) as caught:
        call(request())

    exhausted = [e["retries"] for e in logs if e["event"] == "call_retries_exhausted"]
    assert (caught.value.kind, len(server.requests), exhausted) == (ErrorKind.TRANSIENT, 3, [2])


def test_error_event_mid_stream_is_retried_and_billed(server, call):
    """An overloaded error inside the stream is retried; tokens billed before it are settled."""
    overloaded = {"type": "overloaded_error", "message": "Overloaded"}
    server.script(
        anthropic_sse(input_tokens=500, upto=4, error=overloaded),
        anthropic_sse("done", input_tokens=500, output_tokens=20),
    )

    priced = call.caller.call(request())

    completion = priced.completion
    assert (completion.text, completion.retries, len(server.requests)) == ("done", 1, 2)
    assert [(c.stop_reason, c.usage) for c, _ in call.records.closed] == [
        (StopReason.ERROR, Usage(500, 0, 0, 1)),
        (StopReason.END, Usage(500, 0, 0, 20)),
    ]
    assert priced.cost_usd == call.budget.spent_run == sum(a for _, a in call.records.closed)


@pytest.mark.parametrize(
    "reply",
    [
        anthropic_sse(upto=4, cut=True),  # body cut mid-chunk: raw httpx2 RemoteProtocolError
        anthropic_sse(upto=6),  # clean end of body but no message_stop
        anthropic_sse(upto=0),  # an empty stream: no message_start
        Reply(
            chunks=[b"event: message_start\ndata: {not json\n\n"], content_type="text/event-stream"
        ),
        json_reply(
            {"id": "msg", "type": "message", "content": []}
        ),  # a gateway that ignored stream
        Reply(body=b"<html>502 bad gateway</html>", content_type="text/html"),
    ],
)
def test_broken_or_malformed_streams_are_retried(server, call, reply):
    """A cut, truncated, garbled or non-SSE 200 is transient: retried, then it succeeds."""
    server.script(reply, anthropic_sse("ok"))

    completion = call(request())

    assert (completion.text, len(server.requests)) == ("ok", 2)


def test_not_an_event_stream_says_why(server, raw):
    """A 200 JSON body where a stream was asked for points at the gateway."""
    server.script(json_reply({"id": "msg", "type": "message"}))

    with pytest.raises(ProviderError, match=r"event stream.*gateway") as caught:
        raw.complete(request())

    assert caught.value.kind == ErrorKind.TRANSIENT


def test_timeout_is_transient(server):
    """A server slower than the timeout is a retried transient fault, bounded by attempts."""
    server.script(*[Reply(delay_s=1.0, body=b"{}")] * 2)
    call = calls_over(
        AnthropicProvider(KEY, timeout_s=0.2),
        RetryPolicy(max_attempts=2, max_wait_s=0.01, backoff_base_s=0.001, backoff_max_s=0.001),
    )

    with pytest.raises(ProviderError, match="timed out") as caught:
        call(request())

    assert (caught.value.kind, len(server.requests)) == (ErrorKind.TRANSIENT, 2)


def test_a_stream_of_keep_alives_that_never_ends_is_cut_at_the_deadline(server):
    """A gateway that keeps the stream open with SSE comments and never sends another event
    resets every read timeout: the stream deadline still ends the try, as an unknown outcome
    charged its reservation, instead of holding the worker (and its money) all night."""
    start = anthropic_sse("x").chunks[0]  # message_start, then only keep-alive comments
    server.script(Reply(chunks=[start, b": keep-alive\n\n"], content_type="text/event-stream",
                        chunk_delay_s=0.05, forever=True))  # fmt: skip
    call = calls_over(AnthropicProvider(KEY, timeout_s=1), RetryPolicy(max_attempts=1))

    asked = request(max_tokens=10)

    caught = call_in_thread(call, asked)

    worst = worst_case(
        asked, fixture_prices().get(asked.route.model), AnthropicProvider(KEY, timeout_s=1)
    )
    assert (caught.kind, caught.outcome_unknown) == (ErrorKind.TRANSIENT, True)
    assert (call.budget.spent_run, call.budget.reserved_run) == (worst, 0)


def test_connection_refused_is_transient(monkeypatch):
    """Nothing listening at the base URL is a transient connection fault."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    call = calls_over(AnthropicProvider(KEY, timeout_s=2), FAST)

    with pytest.raises(ProviderError, match="ConnectError") as caught:
        call(request())

    assert (caught.value.kind, len(call.records.closed)) == (ErrorKind.TRANSIENT, 3)


# --- keys ----------------------------------------------------------------------------------


def test_missing_key_names_the_variable(monkeypatch):
    """from_env without ANTHROPIC_API_KEY raises MissingKeyError naming it."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider.from_env(timeout_s=5)


def test_key_never_reaches_logs_or_errors(server, call):
    """An error body that echoes the key is redacted; no log event or call record carries it."""
    server.script(
        anthropic_error(429, "rate_limit_error", headers={"retry-after-ms": "1"}),
        anthropic_error(400, "invalid_request_error", f"bad header x-api-key: {KEY}"),
    )

    with capture_logs() as logs, pytest.raises(ProviderError) as caught:
        call(request())

    assert KEY not in str(caught.value) and "[REDACTED]" in str(caught.value)
    assert not [e for e in logs if KEY in repr(e)]
    assert not [c for c, _ in call.records.closed if KEY in c.detail]
    assert logs, "the retry was logged"
