"""GeminiProvider behind the Caller, through the real google-genai client, against a local fake."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest
from google import genai
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
    ServiceTier,
    StopReason,
    Usage,
)
from harness.pricing import Price, cost
from harness.providers import AccountError, MissingKeyError
from harness.providers.gemini import GeminiProvider
from tests.conftest import Calls, call_in_thread, calls_over, fixture_prices
from tests.fakeserver import FakeLLMServer, Reply, gemini_error, gemini_reply, json_reply

KEY = "AIzaSyFAKEFAKEFAKEFAKEFAKEFAKEFAKE1234"
FAST = RetryPolicy(
    max_attempts=3, max_total_s=30, max_wait_s=0.05, backoff_base_s=0.001, backoff_max_s=0.01
)
RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"


def request(
    *, variable: str = "FAILING TESTS", max_tokens: int = 16_384, prompt: Prompt | None = None
) -> CallRequest:
    route = Route("cheap", "gemini", "gemini-3.8-flash", max_tokens)
    prompt = prompt or Prompt("SYSTEM RULES", "REFERENCE AND TESTS", variable)
    return CallRequest(route, prompt, "orders", "review", 1)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    for name in (
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
        "GOOGLE_GENAI_API_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with FakeLLMServer() as fake:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        yield fake


@pytest.fixture
def raw(server: FakeLLMServer) -> GeminiProvider:
    return GeminiProvider(KEY, timeout_s=5, key_source="GEMINI_API_KEY")


@pytest.fixture
def call(raw: GeminiProvider) -> Calls:
    """The production path: the Caller (reserve, retry, settle, record) over the adapter."""
    return calls_over(raw, FAST)


# --- parsing and cost ----------------------------------------------------------------------


def test_usage_subtracts_cache_and_adds_thoughts(server, call):
    """Fresh input = prompt - cached; output = candidates + thoughts; thoughts not in text."""
    server.script(
        gemini_reply("def handle(): ...", prompt=5000, cached=4096, candidates=300, thoughts=1200)
    )

    completion = call(request())

    assert ("def handle(): ...", Usage(904, 0, 4096, 1500), StopReason.END) == (
        completion.text,
        completion.usage,
        completion.stop_reason,
    )
    assert (completion.provider, completion.model, completion.retries) == (
        "gemini",
        "gemini-3.8-flash",
        0,
    )


def test_cost_is_exact_decimal(server, call):
    """Cost is exact to the token, cache reads at the cache price, thinking as output."""
    server.script(gemini_reply(prompt=10_001, cached=8_000, candidates=333, thoughts=4_000))
    price = Price(
        "gemini-3.8-flash",
        "gemini",
        Decimal("0.75"),
        Decimal("3.75"),
        Decimal("0.75"),
        Decimal("0.075"),
    )

    amount = cost(call(request()).usage, price)

    assert Decimal("0.0183495") == amount


# --- the request on the wire ---------------------------------------------------------------


def test_stable_prefix_comes_first(server, call):
    """System goes to systemInstruction; the stable part precedes the per-attempt part."""
    server.script(gemini_reply())

    call(request())

    seen = server.requests[0]
    assert "/models/gemini-3.8-flash:generateContent" in seen.path
    assert (seen.json["contents"][0]["parts"]) == [
        {"text": "REFERENCE AND TESTS"},
        {"text": "FAILING TESTS"},
    ]
    assert (seen.json["systemInstruction"], seen.json["generationConfig"]["maxOutputTokens"]) == (
        {"parts": [{"text": "SYSTEM RULES"}], "role": "user"},
        16_384,
    )
    assert seen.headers["x-goog-api-key"] == KEY


def test_prefix_is_byte_identical_across_attempts(server, call):
    """Two attempts share the system instruction and first part: implicit caching applies."""
    server.script(gemini_reply(), gemini_reply())

    call(request(variable="attempt 1"))
    call(request(variable="attempt 2"))

    first, second = (seen.json for seen in server.requests)
    assert (first["systemInstruction"], first["contents"][0]["parts"][0]) == (
        second["systemInstruction"],
        second["contents"][0]["parts"][0],
    )


def test_timeout_is_set_in_milliseconds(server):
    """HttpOptions.timeout is milliseconds: 2.5 s becomes 2500, and the server is told."""
    server.script(gemini_reply())
    adapter = GeminiProvider(KEY, timeout_s=2.5)

    calls_over(adapter, FAST)(request())

    assert (
        adapter._client._api_client._http_options.timeout,
        server.requests[0].headers["x-server-timeout"],
    ) == (2500, "3")


def test_client_is_kept_and_base_url_comes_from_the_environment(server, raw):
    """The adapter holds its genai Client, whose base URL the SDK read from the environment."""
    assert isinstance(raw._client, genai.Client)
    assert raw._client._api_client._http_options.base_url.startswith(server.url)


def test_sdk_retries_are_off(server, raw):
    """The bare adapter makes one request on a 503: retries belong to the Caller."""
    server.script(gemini_error(503, "UNAVAILABLE"), gemini_reply())

    with pytest.raises(ProviderError) as caught:
        raw.complete(request())

    assert (caught.value.kind, len(server.requests)) == (ErrorKind.TRANSIENT, 1)


# --- outcomes, not crashes -------------------------------------------------------------------


def test_truncation_with_no_text_is_an_outcome(server, call):
    """MAX_TOKENS with no text at all (thinking used the budget) is MAX_TOKENS, text ''."""
    server.script(gemini_reply(None, finish="MAX_TOKENS", candidates=None, thoughts=16_384))

    completion = call(request())

    assert (completion.text, completion.stop_reason, completion.usage.output_tokens) == (
        "",
        StopReason.MAX_TOKENS,
        16_384,
    )


@pytest.mark.parametrize("finish", ["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "OTHER"])
def test_safety_stops_are_refusals(server, call, finish):
    """Finish reasons other than STOP and MAX_TOKENS are REFUSAL outcomes with the reason."""
    server.script(gemini_reply(finish=finish))

    completion = call(request())

    assert (StopReason.REFUSAL, finish, 1) == (
        completion.stop_reason,
        completion.detail,
        len(server.requests),
    )


def test_blocked_prompt_is_a_refusal(server, call):
    """A prompt blocked before generation is a REFUSAL naming the block reason."""
    server.script(gemini_reply(block_reason="PROHIBITED_CONTENT"))

    completion = call(request())

    assert (completion.stop_reason, completion.detail) == (
        StopReason.REFUSAL,
        "prompt blocked: PROHIBITED_CONTENT",
    )


def test_prompt_too_long_is_an_outcome(server, call):
    """A 400 about the input token count is a CONTEXT_TOO_LONG completion, sent once."""
    server.script(
        gemini_error(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200000) "
            "exceeds the maximum number of tokens allowed (1048576).",
        )
    )

    completion = call(request())

    assert (completion.stop_reason, len(server.requests)) == (StopReason.CONTEXT_TOO_LONG, 1)


def test_continuation_hops_are_followed_and_summed(server, call):
    """A CONTINUATION reply is resumed with its token; text joins, every hop is billed."""
    server.script(
        gemini_reply(
            "part one, ",
            finish="CONTINUATION",
            continuation_token="Y29udA==",
            prompt=100,
            candidates=10,
        ),
        gemini_reply("part two", prompt=100, candidates=7),
    )

    completion = call(request())

    assert ("part one, part two", Usage(200, 0, 0, 17), StopReason.END) == (
        completion.text,
        completion.usage,
        completion.stop_reason,
    )
    assert [seen.json.get("continuationToken") for seen in server.requests] == [None, "Y29udA=="]


# --- errors and retries ----------------------------------------------------------------------


def test_rate_limit_honours_retry_info(server, call):
    """A 429 with google.rpc.RetryInfo waits the retryDelay it names, then retries."""
    server.script(
        gemini_error(
            429,
            "RESOURCE_EXHAUSTED",
            "quota exceeded",
            details=[{"@type": RETRY_INFO, "retryDelay": "0.002s"}],
        ),
        gemini_reply(),
    )

    with capture_logs() as logs:
        completion = call(request())

    assert (
        completion.retries,
        [(e["reason"], e["wait_s"]) for e in logs if e["event"] == "call_retry"],
    ) == (1, [("rate_limit", 0.002)])


def test_retry_after_header_wins_and_is_capped(server, call):
    """A gateway's retry-after header is honoured, capped at max_wait_s."""
    server.script(
        gemini_error(429, "RESOURCE_EXHAUSTED", headers={"retry-after": "600"}), gemini_reply()
    )

    with capture_logs() as logs:
        call(request())

    assert [e["wait_s"] for e in logs if e["event"] == "call_retry"] == [0.05]


def test_ordinary_quota_message_is_a_rate_limit(server, call):
    """Google's usual 429 text mentions billing but is a per-minute quota: retried."""
    quota = (
        "You exceeded your current quota, please check your plan and billing details. "
        "For more information on this error, head to: https://ai.google.dev/gemini-api/docs"
    )
    server.script(
        gemini_error(
            429, "RESOURCE_EXHAUSTED", quota, details=[{"@type": RETRY_INFO, "retryDelay": "0s"}]
        ),
        gemini_reply("ok"),
    )

    assert call(request()).retries == 1


@pytest.mark.parametrize(
    ("status", "text"),
    [
        (408, "DEADLINE_EXCEEDED"),
        (500, "INTERNAL"),
        (502, "BAD_GATEWAY"),
        (503, "UNAVAILABLE"),
        (504, "DEADLINE_EXCEEDED"),
    ],
)
def test_transient_statuses_are_retried(server, call, status, text):
    """408 and 5xx are retried, then the call succeeds."""
    server.script(gemini_error(status, text), gemini_reply("ok"))

    completion = call(request())

    assert (completion.text, completion.retries, len(server.requests)) == ("ok", 1, 2)


@pytest.mark.parametrize(
    ("status", "text"),
    [
        (400, "INVALID_ARGUMENT"),
        (400, "FAILED_PRECONDITION"),
        (404, "NOT_FOUND"),
    ],
)
def test_client_errors_are_not_retried(server, call, status, text):
    """400 and 404 are FATAL: one request."""
    server.script(gemini_error(status, text, "bad"))

    with pytest.raises(ProviderError) as caught:
        call(request())

    assert (caught.value.kind, len(server.requests)) == (ErrorKind.FATAL, 1)


@pytest.mark.parametrize(
    "reply",
    [
        gemini_error(401, "UNAUTHENTICATED"),
        gemini_error(403, "PERMISSION_DENIED"),
        gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            details=[
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            ],
        ),
    ],
)
def test_auth_failure_is_not_retried(server, call, reply):
    """A refused key (401, 403, or Gemini's 400 API_KEY_INVALID) raises AuthenticationError."""
    server.script(reply)

    with pytest.raises(AuthenticationError) as caught:
        call(request())

    assert (caught.value.kind, len(server.requests)) == (ErrorKind.AUTH, 1)
    assert "GEMINI_API_KEY" in str(caught.value) and KEY not in str(caught.value)


FREE_TIER_ZERO = (
    "You exceeded your current quota, please check your plan and billing details.\n* Quota "
    "exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_"
    "input_token_count, limit: 0, model: gemini-3.8-flash"
)
NO_BILLING = "User location is not supported for the API use without a billing account linked."


@pytest.mark.parametrize(
    "reply",
    [
        gemini_error(
            429, "RESOURCE_EXHAUSTED", "Your project has exceeded its monthly spending cap."
        ),
        gemini_error(429, "RESOURCE_EXHAUSTED", FREE_TIER_ZERO),
        gemini_error(400, "FAILED_PRECONDITION", NO_BILLING),
        gemini_error(402, "PAYMENT_REQUIRED", "payment required"),
    ],
    ids=["spending-cap", "quota-limit-0", "billing-precondition", "402"],
)
def test_account_that_cannot_pay_stops_the_run(server, call, reply):
    """A spending cap, a zero quota (no billing for the model), a billing precondition or a
    402 is an AccountError, sent once: never retried as a rate limit or failed per task."""
    server.script(reply)

    with pytest.raises(AccountError):
        call(request())

    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body=b"<html>upstream connect error</html>", content_type="text/html"),
        Reply(body=b""),
        json_reply({}),
        json_reply(["not", "an", "object"]),
        gemini_reply(usage=False),  # usage_metadata None: the call could not be priced
        json_reply({"usageMetadata": {"promptTokenCount": 5}}),  # no candidates
        gemini_reply(finish=None),  # no finish reason
        Reply(drop=True),  # connection closed with no answer: raw httpx2 error
    ],
)
def test_malformed_or_empty_bodies_are_retried(server, call, reply):
    """A 200 with an unusable body, or a dropped connection, is transient: retried."""
    server.script(reply, gemini_reply("ok"))

    completion = call(request())

    assert (completion.text, len(server.requests)) == ("ok", 2)


def test_billed_reply_before_a_failure_is_settled(server, call):
    """A reply without a finish reason still cost its tokens: its failed try is charged them."""
    server.script(
        gemini_reply(finish=None, prompt=70, candidates=30), gemini_reply(prompt=10, candidates=5)
    )

    priced = call.caller.call(request())

    assert [(c.stop_reason, c.usage) for c, _ in call.records.closed] == [
        (StopReason.ERROR, Usage(70, 0, 0, 30)),
        (StopReason.END, Usage(10, 0, 0, 5)),
    ]
    assert priced.cost_usd == call.budget.spent_run == sum(a for _, a in call.records.closed)


def test_hops_billed_before_a_failed_hop_are_settled(server, call):
    """A fault on a continuation hop charges its try for the hops already answered."""
    server.script(
        gemini_reply("part one", finish="CONTINUATION", continuation_token="Y29udA==", prompt=100),
        gemini_error(503, "UNAVAILABLE"),
        gemini_reply("whole", prompt=100, candidates=7),
    )

    completion = call(request())

    assert (completion.text, [(c.stop_reason, c.usage) for c, _ in call.records.closed]) == (
        "whole",
        [(StopReason.ERROR, Usage(100, 0, 0, 5)), (StopReason.END, Usage(100, 0, 0, 7))],
    )


def test_timeout_is_transient_and_bounded(server):
    """A server slower than the timeout is retried (raw httpx2 timeout), up to max_attempts."""
    server.script(*[Reply(delay_s=1.0, body=b"{}")] * 2)
    call = calls_over(
        GeminiProvider(KEY, timeout_s=0.2),
        RetryPolicy(max_attempts=2, max_wait_s=0.01, backoff_base_s=0.001, backoff_max_s=0.001),
    )

    with pytest.raises(ProviderError, match="timed out") as caught:
        call(request())

    assert (caught.value.kind, len(server.requests)) == (ErrorKind.TRANSIENT, 2)


# --- keys ----------------------------------------------------------------------------------


def test_missing_key_names_both_variables(monkeypatch):
    """from_env with neither variable set names GEMINI_API_KEY and GOOGLE_API_KEY."""
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)

    with pytest.raises(MissingKeyError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        GeminiProvider.from_env(timeout_s=5)


def test_google_api_key_is_accepted(server, monkeypatch):
    """GOOGLE_API_KEY alone is enough, and it is the key sent."""
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    server.script(gemini_reply())

    calls_over(GeminiProvider.from_env(timeout_s=5), FAST)(request())

    assert server.requests[0].headers["x-goog-api-key"] == KEY


def test_key_never_reaches_logs_or_errors(server, call):
    """An error that echoes the key is redacted; no log event or call record carries it."""
    server.script(
        gemini_error(503, "UNAVAILABLE"),
        gemini_error(400, "INVALID_ARGUMENT", f"bad request with key={KEY}"),
    )

    with capture_logs() as logs, pytest.raises(ProviderError) as caught:
        call(request())

    assert KEY not in str(caught.value) and "[REDACTED]" in str(caught.value)
    assert logs and not [e for e in logs if KEY in repr(e)]
    assert not [c for c, _ in call.records.closed if KEY in c.detail]


# --- Gemini Flex ---------------------------------------------------------------------------


def flex(req: CallRequest) -> CallRequest:
    """The same request on a flex route."""
    route = dataclasses.replace(req.route, service_tier=ServiceTier.FLEX)
    return dataclasses.replace(req, route=route)


def test_standard_route_sends_no_service_tier(server, call):
    """An ordinary route leaves serviceTier out (the vendor's default is standard)."""
    server.script(gemini_reply("code"))

    completion = call(request())

    assert ("serviceTier" in server.requests[0].json, completion.service_tier) == (
        False,
        ServiceTier.STANDARD,
    )


def test_flex_route_is_sent_as_flex_and_priced_at_the_flex_rate(server, call):
    """A flex route asks for serviceTier "flex"; the Caller charges the flex price exactly
    (half the list input and output rates; cache hits at the list cache rate)."""
    server.script(gemini_reply("code", prompt=5000, cached=4096, candidates=300, thoughts=1200))

    priced = call.caller.call(flex(request()))

    price = fixture_prices().get("gemini-3.8-flash")
    half = Decimal("0.5")
    expected = (904 * price.input * half + 4096 * price.cache_read + 1500 * price.output * half) / (
        1_000_000
    )
    assert ("flex", ServiceTier.FLEX, expected) == (
        server.requests[0].json["serviceTier"],
        priced.completion.service_tier,
        priced.cost_usd,
    )


@pytest.mark.parametrize(
    "shed",
    [
        gemini_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
        gemini_error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted."),
    ],
)
def test_shed_flex_request_falls_back_to_standard_once(server, call, shed):
    """A shed flex request is sent once more at standard, logged, and priced at standard."""
    server.script(shed, gemini_reply("code", prompt=1000, candidates=200))

    with capture_logs() as logs:
        priced = call.caller.call(flex(request()))

    price = fixture_prices().get("gemini-3.8-flash")
    sent = [r.json.get("serviceTier") for r in server.requests]
    fallbacks = [e for e in logs if e["event"] == "flex_shed_fallback"]
    assert (["flex", None], ServiceTier.STANDARD, cost(Usage(1000, 0, 0, 200), price)) == (
        sent,
        priced.completion.service_tier,
        priced.cost_usd,
    )
    assert [(shed.status, "review")] == [(e["status"], e["step"]) for e in fallbacks]


def test_a_standard_request_is_never_resent_on_a_shed_status(server, call):
    """Only flex falls back: a standard 503 goes to the retry policy, not to another tier."""
    server.script(gemini_error(503, "UNAVAILABLE"), gemini_reply("code"))

    with capture_logs() as logs:
        call(request())

    assert (
        [r.json.get("serviceTier") for r in server.requests],
        [e for e in logs if e["event"] == "flex_shed_fallback"],
    ) == ([None, None], [])


def test_flex_reserves_the_standard_worst_case(raw):
    """A flex call may be served at standard, so it reserves the standard price; a batch
    entry, which is billed at the batch price whatever happens, reserves that."""
    price = fixture_prices().get("gemini-3.8-flash")
    standard = request()
    batch = dataclasses.replace(
        standard, route=dataclasses.replace(standard.route, service_tier=ServiceTier.BATCH)
    )

    worst = [worst_case(r, price, raw) for r in (standard, flex(standard), batch)]

    assert [worst[0], worst[0], worst_case(standard, price.at(ServiceTier.BATCH), raw)] == worst
    assert worst[2] < worst[0]


def test_a_body_dripped_forever_is_cut_at_the_deadline(server):
    """A 200 whose body arrives a byte at a time and never ends resets every read timeout:
    the read deadline still ends the try, as an unknown outcome charged its reservation,
    instead of holding the worker (and its money) all night."""
    server.script(Reply(chunks=[b" "], chunk_delay_s=0.05, forever=True))
    adapter = GeminiProvider(KEY, timeout_s=0.5)
    call = calls_over(adapter, RetryPolicy(max_attempts=1))
    asked = request()

    caught = call_in_thread(call, asked)

    worst = worst_case(asked, fixture_prices().get(asked.route.model), adapter)
    assert (caught.kind, caught.outcome_unknown) == (ErrorKind.TRANSIENT, True)
    assert (call.budget.spent_run, call.budget.reserved_run) == (worst, 0)


def test_a_flex_request_waits_longer_than_the_standard_timeout(server):
    """Flex may queue for minutes: it gets its own, longer timeout; standard keeps its own."""
    slow = gemini_reply("code")
    slow.delay_s = 1.0
    adapter = GeminiProvider(KEY, timeout_s=0.3, flex_timeout_s=5)
    server.script(slow, dataclasses.replace(slow))

    served = adapter.complete(flex(request()))
    with pytest.raises(ProviderError) as caught:
        adapter.complete(request())

    assert (
        served.service_tier,
        caught.value.kind,
        caught.value.outcome_unknown,
    ) == (ServiceTier.FLEX, ErrorKind.TRANSIENT, True)


def test_an_ordinary_quota_429_is_still_a_rate_limit(server, call):
    """A per-minute quota with a real limit ("limit: 10") is waited out, not a halt."""
    text = FREE_TIER_ZERO.replace("limit: 0", "limit: 10")
    server.script(gemini_error(429, "RESOURCE_EXHAUSTED", text), gemini_reply("ok"))

    completion = call(request())

    assert (completion.text, len(server.requests)) == ("ok", 2)
