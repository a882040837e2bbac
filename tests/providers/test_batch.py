"""Batch adapters through the real anthropic and google-genai SDKs, against the local fake."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from structlog.testing import capture_logs

from harness.llm import (
    AuthenticationError,
    BatchItem,
    BatchProvider,
    BatchState,
    BatchStatus,
    CallRequest,
    EntryOutcome,
    ErrorKind,
    Prompt,
    ProviderError,
    Route,
    ServiceTier,
    StopReason,
    Usage,
)
from harness.pricing import cost
from harness.providers import MissingKeyError, build_batch_adapter
from harness.providers.anthropic import message_params
from harness.providers.anthropic_batch import AnthropicBatches
from harness.providers.gemini import GeminiProvider
from harness.providers.gemini_batch import GeminiBatches, wire_request
from tests.conftest import fixture_prices
from tests.fakebatch import BatchScript, EntryScript
from tests.fakeserver import FakeLLMServer, anthropic_error, gemini_error, gemini_reply

A_KEY = "sk-ant-api03-FAKEKEYFAKEKEYFAKEKEY"
G_KEY = "AIzaSyFAKEFAKEFAKEFAKEFAKEFAKEFAKE1234"
SONNET = Route("mid", "anthropic", "claude-sonnet-5-5", 32_000)
FLASH = Route("cheap", "gemini", "gemini-3.8-flash", 16_384)


def items(route: Route, *ids: str) -> list[BatchItem]:
    return [
        BatchItem(i, CallRequest(route, Prompt("SYSTEM", f"REFERENCE {i}", "TAIL"), i, "write", 1))
        for i in ids
    ]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    for name in (
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_CUSTOM_HEADERS",
        "ANTHROPIC_PROFILE",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
        "GOOGLE_GENAI_API_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with FakeLLMServer() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        yield fake


@pytest.fixture
def claude(server: FakeLLMServer) -> AnthropicBatches:
    return AnthropicBatches(A_KEY, timeout_s=5, key_source="ANTHROPIC_API_KEY")


@pytest.fixture
def gemini(server: FakeLLMServer) -> GeminiBatches:
    return GeminiBatches(G_KEY, timeout_s=5, key_source="GEMINI_API_KEY")


def run_to_end(adapter: BatchProvider, handle, polls: int = 10) -> list[BatchStatus]:
    seen = []
    for _ in range(polls):
        seen.append(adapter.status(handle))
        if seen[-1].state is BatchState.ENDED:
            break
    return seen


# --- Anthropic -----------------------------------------------------------------------------


def test_anthropic_batch_round_trip_matches_results_by_custom_id(server, claude):
    """Create, poll (counts zero until ended), read out-of-order results by custom_id."""
    server.batches.script(
        BatchScript(
            polls=3,
            entries={
                "t1-write": EntryScript(text="code one", bill=(10, 3000, 0, 700)),
                "t2-write": EntryScript(text="code two", bill=(12, 0, 3000, 650)),
                "t3-write": EntryScript("errored", error="max_tokens: too large"),
            },
        )
    )

    handle = claude.submit(items(SONNET, "t1-write", "t2-write", "t3-write"), display_name="r-1")
    statuses = run_to_end(claude, handle)
    read = list(claude.results(handle))
    entries = {e.custom_id: e for e in read}

    assert [BatchStatus(BatchState.RUNNING)] * 2 + [
        BatchStatus(BatchState.ENDED, succeeded=2, errored=1)
    ] == statuses
    assert [e.custom_id for e in read] == ["t3-write", "t2-write", "t1-write"]  # vendor order
    one, two, three = entries["t1-write"], entries["t2-write"], entries["t3-write"]
    assert (EntryOutcome.SUCCEEDED, "code one", Usage(10, 3000, 0, 700), ServiceTier.BATCH) == (
        one.outcome,
        one.completion.text,
        one.completion.usage,
        one.completion.service_tier,
    )
    assert ("code two", Usage(12, 0, 3000, 650), StopReason.END) == (
        two.completion.text,
        two.completion.usage,
        two.completion.stop_reason,
    )
    assert (
        three.outcome,
        three.completion,
        three.error,
    ) == (EntryOutcome.ERRORED, None, "invalid_request_error: max_tokens: too large")
    assert (
        server.batches.creates["anthropic"],
        handle.provider,
        handle.model,
        handle.display_name,
    ) == (1, "anthropic", "claude-sonnet-5-5", "r-1")


def test_anthropic_entries_use_the_interactive_builder_so_the_prefix_caches(server, claude):
    """Each entry's params are the interactive adapter's, cache breakpoint on the stable block."""
    batch = items(SONNET, "a", "b")

    claude.submit(batch, display_name="r-1")

    sent = server.requests[-1].json["requests"]
    assert [{"custom_id": i.custom_id, "params": message_params(i.request)} for i in batch] == sent
    assert sent[0]["params"]["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}


def test_anthropic_results_come_from_the_absolute_results_url(server, claude):
    """The results are streamed from the batch's results_url, wherever it points."""
    handle = claude.submit(items(SONNET, "a"), display_name="r-1")
    run_to_end(claude, handle)

    list(claude.results(handle))

    assert ("GET", f"/fake-results/{handle.id}.jsonl") == (
        server.requests[-1].method,
        server.requests[-1].path,
    )


def test_anthropic_cancel_ends_with_unrun_entries_canceled(server, claude):
    """A batch that would never end is canceled: canceling, then ended; unrun entries canceled."""
    server.batches.script(
        BatchScript(polls=None, entries={"a": EntryScript(done_before_cancel=True)})
    )
    handle = claude.submit(items(SONNET, "a", "b", "c"), display_name="r-1")
    running = [claude.status(handle).state for _ in range(5)]

    claude.cancel(handle)
    ended = claude.status(handle)
    outcomes = {e.custom_id: e.outcome for e in claude.results(handle)}

    assert running == [BatchState.RUNNING] * 5
    assert BatchStatus(BatchState.ENDED, succeeded=1, canceled=2) == ended
    expected = {"a": EntryOutcome.SUCCEEDED, "b": EntryOutcome.CANCELED, "c": EntryOutcome.CANCELED}
    assert expected == outcomes
    assert server.batches.billed == [("a", (100, 0, 0, 50))]


def test_anthropic_expired_entries_are_reported(server, claude):
    """An entry the vendor let expire comes back EXPIRED, with no completion."""
    server.batches.script(BatchScript(entries={"b": EntryScript("expired")}))
    handle = claude.submit(items(SONNET, "a", "b"), display_name="r-1")
    status = claude.status(handle)

    entries = {e.custom_id: e for e in claude.results(handle)}

    assert BatchStatus(BatchState.ENDED, succeeded=1, expired=1) == status
    assert (entries["b"].outcome, entries["b"].completion) == (EntryOutcome.EXPIRED, None)


def test_anthropic_find_never_guesses(server, claude):
    """Anthropic keeps no batch name, so find proves nothing and returns nothing (a guess
    would re-attach a night to another night's batch)."""
    claude.submit(items(SONNET, "a"), display_name="r-1")
    claude.submit(items(SONNET, "b"), display_name="r-1")

    assert claude.find("r-1") == []


@pytest.mark.parametrize(
    ("reply", "kind", "error"),
    [
        (anthropic_error(529, "overloaded_error"), ErrorKind.TRANSIENT, ProviderError),
        (anthropic_error(429, "rate_limit_error"), ErrorKind.RATE_LIMIT, ProviderError),
        (anthropic_error(401, "authentication_error"), ErrorKind.AUTH, AuthenticationError),
        (anthropic_error(400, "invalid_request_error"), ErrorKind.FATAL, ProviderError),
    ],
)
def test_anthropic_batch_errors_are_classified_without_sdk_retries(
    server, claude, reply, kind, error
):
    """A refused create is one request, classified by the interactive adapter's rules."""
    server.batches.fail(reply)

    with pytest.raises(error) as caught:
        claude.submit(items(SONNET, "a"), display_name="r-1")

    assert (kind, 1, 0) == (
        caught.value.kind,
        len(server.requests),
        server.batches.creates["anthropic"],
    )


def test_a_mixed_or_badly_keyed_batch_is_refused_before_sending(server, claude):
    """One provider and model per batch, and custom_ids the API accepts: else nothing is sent."""
    other = Route("frontier", "anthropic", "claude-opus-5-5", 1000)

    with pytest.raises(ValueError, match="one anthropic batch is one anthropic model"):
        claude.submit(items(SONNET, "a") + items(other, "b"), display_name="r-1")
    with pytest.raises(ValueError, match="group the items by route"):
        claude.submit(items(FLASH, "a"), display_name="r-1")
    with pytest.raises(ValueError, match="custom_ids must be unique"):
        claude.submit(items(SONNET, "task/write"), display_name="r-1")
    with pytest.raises(ValueError, match="custom_ids must be unique"):
        claude.submit(items(SONNET, "a", "a"), display_name="r-1")

    assert server.requests == []


# --- Gemini --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1", "v1beta"])
def test_gemini_inline_batch_round_trip(server, gemini, monkeypatch, version):
    """Inline requests on /v1 and /v1beta: an operation that ends, responses keyed by custom_id."""
    monkeypatch.setenv("GOOGLE_GENAI_API_VERSION", version)
    adapter = GeminiBatches(G_KEY, timeout_s=5)
    server.batches.script(
        BatchScript(
            polls=2,
            entries={
                "a": EntryScript(text="code a", bill=(900, 0, 4096, 1500)),
                "b": EntryScript("errored", error="request too large"),
            },
        )
    )

    handle = adapter.submit(items(FLASH, "a", "b", "c"), display_name="run-20261124-0200-ab12")
    statuses = run_to_end(adapter, handle)
    entries = {e.custom_id: e for e in adapter.results(handle)}

    create = server.requests[0]
    assert f"/{version}/models/gemini-3.8-flash:batchGenerateContent" == create.path
    assert create.json["batch"]["displayName"] == "run-20261124-0200-ab12"
    assert [s.state for s in statuses] == [BatchState.RUNNING, BatchState.ENDED]
    assert BatchStatus(BatchState.ENDED, succeeded=2, errored=1) == statuses[-1]
    a = entries["a"].completion
    assert ("code a", Usage(900, 0, 4096, 1500), ServiceTier.BATCH) == (
        a.text,
        a.usage,
        a.service_tier,
    )
    assert (
        entries["b"].outcome,
        entries["b"].error,
    ) == (EntryOutcome.ERRORED, "code 3: request too large")
    assert {"a", "b", "c"} == set(entries)
    assert all(p.path.startswith(f"/{version}/") for p in server.requests)


def test_gemini_file_mode_above_the_inline_limit(server):
    """Above the inline limit the requests go up as JSONL (upload URL back at the fake), and
    the results come down as a JSONL file; each line's request is the inline request."""
    small = GeminiBatches(G_KEY, timeout_s=5)
    batch = items(FLASH, "a", "b")
    small.submit(batch, display_name="inline-run")
    inline = server.requests[-1].json["batch"]["inputConfig"]["requests"]["requests"]
    filed = GeminiBatches(G_KEY, timeout_s=5, inline_limit=100)
    server.batches.script(BatchScript(entries={"b": EntryScript(text="code b")}))

    handle = filed.submit(batch, display_name="file-run")
    filed.status(handle)
    entries = {e.custom_id: e for e in filed.results(handle)}

    start, chunk, create = server.requests[1:4]
    lines = [json.loads(x) for x in chunk.body.decode().splitlines()]
    assert (
        start.path,
        start.headers["x-goog-upload-protocol"],
        start.headers["x-goog-upload-command"],
    ) == ("/upload/v1/files", "resumable", "start")
    assert chunk.path.startswith("/fake-upload/")
    assert [item["request"] for item in inline] == [line["request"] for line in lines]
    assert [{"key": i.custom_id, "request": wire_request(i.request)} for i in batch] == lines
    uploaded = f"files/upload{chunk.path.rsplit('/', 1)[1]}"
    assert {"fileName": uploaded} == create.json["batch"]["inputConfig"]
    assert server.requests[-1].path.endswith(":download?alt=media")
    assert (
        entries["b"].completion.text,
        entries["b"].completion.service_tier,
    ) == ("code b", ServiceTier.BATCH)


def test_gemini_never_ending_batch_is_canceled_and_unrun_entries_not_reported(server, gemini):
    """A batch that never ends stays RUNNING; canceled, it ends and reports only what ran."""
    server.batches.script(
        BatchScript(polls=None, entries={"a": EntryScript(done_before_cancel=True)})
    )
    handle = gemini.submit(items(FLASH, "a", "b"), display_name="r-1")
    running = [gemini.status(handle).state for _ in range(4)]

    gemini.cancel(handle)
    ended = gemini.status(handle)
    entries = {e.custom_id: e.outcome for e in gemini.results(handle)}

    assert running == [BatchState.RUNNING] * 4
    assert ended.state == BatchState.ENDED
    assert entries == {"a": EntryOutcome.SUCCEEDED}
    assert f"/v1/{handle.id}:cancel" == next(
        r.path for r in server.requests if r.path.endswith(":cancel")
    )


def test_gemini_find_matches_the_display_name(server, gemini):
    """find re-attaches to this run's batches by display name, never to another run's."""
    mine = gemini.submit(items(FLASH, "a"), display_name="run-A")
    gemini.submit(items(FLASH, "b"), display_name="run-B")

    found = gemini.find("run-A")

    assert [(mine.id, "gemini-3.8-flash", "run-A")] == [
        (h.id, h.model, h.display_name) for h in found
    ]


def test_gemini_batch_errors_are_classified(server, gemini):
    """A refused create is classified by the interactive adapter's rules; nothing created."""
    server.batches.fail(gemini_error(503, "UNAVAILABLE", "The model is overloaded."))

    with pytest.raises(ProviderError) as caught:
        gemini.submit(items(FLASH, "a"), display_name="r-1")

    assert (
        caught.value.kind,
        caught.value.status,
        server.batches.creates["gemini"],
    ) == (ErrorKind.TRANSIENT, 503, 0)


# --- pricing and building ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("adapter", "route", "bill"),
    [("claude", SONNET, (120, 3000, 4000, 900)), ("gemini", FLASH, (904, 0, 4096, 1500))],
)
def test_batch_entries_cost_half_the_list_price_exactly(request, server, adapter, route, bill):
    """A batch entry's usage priced at the batch tier: half of every list rate (Anthropic's
    discount stacks with caching; Gemini's cache hits keep the list cache rate)."""
    batches = request.getfixturevalue(adapter)
    server.batches.script(BatchScript(default=EntryScript(bill=bill)))
    handle = batches.submit(items(route, "a"), display_name="r-1")
    batches.status(handle)
    (entry,) = batches.results(handle)
    price = fixture_prices().get(route.model)

    amount = cost(entry.completion.usage, price.at(entry.completion.service_tier))

    fresh, write, read, out = bill
    half = Decimal("0.5")
    cache = half if route.provider == "anthropic" else Decimal(1)
    expected = (
        fresh * price.input * half
        + write * price.cache_write * cache
        + read * price.cache_read * cache
        + out * price.output * half
    ) / 1_000_000
    assert expected == amount


def test_build_batch_adapter_keys_from_the_environment(monkeypatch, server):
    """Built by provider name from the environment; a missing key names the variable."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", A_KEY)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)

    built = build_batch_adapter("anthropic", timeout_s=5)

    assert isinstance(built, AnthropicBatches) and isinstance(built, BatchProvider)
    with pytest.raises(MissingKeyError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        build_batch_adapter("gemini", timeout_s=5)
    with pytest.raises(ValueError, match="no batch API for provider 'sim'"):
        build_batch_adapter("sim", timeout_s=5)


def test_gemini_failed_batch_ends_and_is_logged(server, gemini):
    """A batch the vendor failed as a whole has ended, reports no entries, and says so."""
    server.batches.script(BatchScript(gemini_state="BATCH_STATE_FAILED", default=EntryScript()))
    handle = gemini.submit(items(FLASH, "a"), display_name="r-1")

    with capture_logs() as logs:
        status = gemini.status(handle)

    assert (BatchState.ENDED, [handle.id], [], []) == (
        status.state,
        [e["batch_id"] for e in logs if e["event"] == "batch_failed"],
        list(gemini.results(handle)),
        server.batches.billed,
    )


def test_gemini_entries_are_the_interactive_request(server, gemini):
    """A batch entry's request is what the interactive adapter sends for the same call."""
    (item,) = items(FLASH, "a")
    server.script(gemini_reply("code"))
    GeminiProvider(G_KEY, timeout_s=5).complete(item.request)
    interactive = server.requests[-1].json

    gemini.submit([item], display_name="r-1")

    (entry,) = server.requests[-1].json["batch"]["inputConfig"]["requests"]["requests"]
    assert interactive == entry["request"]
