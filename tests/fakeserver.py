"""A local fake of the Anthropic Messages, Gemini generateContent and OpenAI Chat Completions
HTTP APIs.

It listens on 127.0.0.1 on an ephemeral port and answers scripted replies in order, so the
real SDK clients can be driven offline through ANTHROPIC_BASE_URL / GOOGLE_GEMINI_BASE_URL,
OPENAI_BASE_URL or an endpoint's `base_url` (`openai_base`).
Every request is recorded (path, headers, JSON body) for the tests to inspect, and so is
what the server "billed": a scripted reply's `bill` is charged once its request has been read,
whatever happens to the answer afterwards (a client that timed out, a dropped connection).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.fakebatch import FakeBatches

__all__ = [
    "FakeLLMServer",
    "Reply",
    "Seen",
    "anthropic_error",
    "anthropic_sse",
    "anthropic_tool_sse",
    "fake_vendors",
    "gemini_call_reply",
    "gemini_error",
    "gemini_reply",
    "json_reply",
    "openai_base",
    "openai_error",
    "openai_reply",
    "openai_sse",
]


# Tokens a provider bills for one request: (fresh input, cache write, cache read, output).
Bill = tuple[int, int, int, int]


@dataclass
class Reply:
    """One scripted answer. `chunks` makes a chunked (streamed) body; `cut` drops the
    connection before the body is complete; `drop` closes it without any answer; `bill` is
    what the provider charges for the request (None: nothing, as for an error status);
    `chunk_delay_s` is slept before each chunk (a slow drip); `forever` repeats the last
    chunk until the client hangs up (a body that never ends)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    delay_s: float = 0.0
    chunks: list[bytes] | None = None
    cut: bool = False
    drop: bool = False
    bill: Bill | None = None
    chunk_delay_s: float = 0.0
    forever: bool = False


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class FakeLLMServer:
    """Scripted replies, first in first out; an unscripted request gets a 400 (not retried)."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.bills: list[tuple[str, Bill]] = []  # (path, tokens) per request billed
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Quiet(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )
        # Batch endpoints of both vendors: stateful, answered before the script is consulted.
        self.batches = FakeBatches(self.url)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> FakeLLMServer:
        with self._lock:
            self._replies.extend(replies)
        return self

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, seen: Seen) -> Reply:
        batch = self.batches.answer(seen.method, seen.path, seen.headers, seen.body)
        if batch is not None:
            with self._lock:
                self.requests.append(seen)
            return batch
        with self._lock:
            self.requests.append(seen)
            if self._replies:
                reply = self._replies.popleft()
                if reply.bill is not None:
                    self.bills.append((seen.path, reply.bill))
                return reply
        return json_reply(
            {
                "error": {
                    "type": "invalid_request_error",
                    "code": 400,
                    "message": "fake server: no reply scripted",
                }
            },
            status=400,
        )


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out or hang up are part of the script, not failures


def _handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = server._next(Seen(self.command, self.path, headers, body))
            time.sleep(reply.delay_s)
            if reply.drop:
                self.close_connection = True
                return
            self.send_response(reply.status)
            self.send_header("content-type", reply.content_type)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.chunks is None:
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
                return
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in _chunks(reply):
                time.sleep(reply.chunk_delay_s)
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            if reply.cut:  # no terminating chunk: the client sees an incomplete body
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")

    return Handler


def _chunks(reply: Reply) -> Iterator[bytes]:
    """The reply's chunks; with `forever`, its last chunk again until the client hangs up."""
    chunks = reply.chunks or []
    yield from chunks
    while reply.forever and chunks:
        yield chunks[-1]


def json_reply(obj: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(obj).encode(), dict(headers or {}))


# --- Anthropic ---------------------------------------------------------------------------


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_sse(
    text: str = "hello",
    *,
    model: str = "claude-sonnet-5-5",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_write: int = 0,
    cache_read: int = 0,
    stop_reason: str | None = "end_turn",
    stop_details: dict[str, Any] | None = None,
    thinking: str | None = None,
    upto: int | None = None,
    error: dict[str, Any] | None = None,
    cut: bool = False,
) -> Reply:
    """A Messages API event stream. `upto` keeps only the first N events (then `error`, an
    in-stream error event, is sent if given); `cut` drops the connection after them."""
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": 1,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
    }
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse("ping", {"type": "ping"}),
    ]
    index = 0
    if thinking is not None:
        events += [
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            ),
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": thinking},
                },
            ),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        index = 1
    events.append(
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            },
        )
    )
    for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
        events.append(
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        )
    events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "stop_details": stop_details,
                },
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(_sse("message_stop", {"type": "message_stop"}))
    if upto is not None:
        events = events[:upto]
    if error is not None:
        events.append(_sse("error", {"type": "error", "error": error}))
    bill = (input_tokens, cache_write, cache_read, output_tokens)
    return Reply(chunks=events, content_type="text/event-stream", cut=cut, bill=bill)


def anthropic_tool_sse(
    calls: list[tuple[str, str, dict[str, Any]]],
    *,
    model: str = "claude-sonnet-5-5",
    input_tokens: int = 10,
    output_tokens: int = 5,
    thinking: str = "I need the helper module.",
    signature: str = "sig-Zm9vYmFy",
) -> Reply:
    """A Messages API stream whose turn is a signed thinking block, then tool_use blocks
    (their input streamed as JSON pieces), ending with stop_reason tool_use."""
    message = {
        "id": "msg_fake_tools",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    events = [_sse("message_start", {"type": "message_start", "message": message})]
    thinking_block = {"type": "thinking", "thinking": "", "signature": ""}
    deltas = [
        {"type": "thinking_delta", "thinking": thinking},
        {"type": "signature_delta", "signature": signature},
    ]
    blocks = [(thinking_block, deltas)]
    for call_id, name, arguments in calls:
        text = json.dumps(arguments)
        pieces = [text[: len(text) // 2], text[len(text) // 2 :]]
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        blocks.append((block, [{"type": "input_json_delta", "partial_json": p} for p in pieces]))
    for index, (block, block_deltas) in enumerate(blocks):
        start = {"type": "content_block_start", "index": index, "content_block": block}
        events.append(_sse("content_block_start", start))
        for delta in block_deltas:
            step = {"type": "content_block_delta", "index": index, "delta": delta}
            events.append(_sse("content_block_delta", step))
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    end = {"stop_reason": "tool_use", "stop_sequence": None}
    usage = {"output_tokens": output_tokens}
    events.append(_sse("message_delta", {"type": "message_delta", "delta": end, "usage": usage}))
    events.append(_sse("message_stop", {"type": "message_stop"}))
    bill = (input_tokens, 0, 0, output_tokens)
    return Reply(chunks=events, content_type="text/event-stream", bill=bill)


def anthropic_error(
    status: int,
    error_type: str,
    message: str = "",
    *,
    headers: dict[str, str] | None = None,
    error_code: str | None = None,
) -> Reply:
    error: dict[str, Any] = {"type": error_type, "message": message or error_type}
    if error_code:
        error["details"] = {"error_code": error_code}
    return json_reply({"type": "error", "error": error}, status=status, headers=headers)


# --- Gemini ------------------------------------------------------------------------------


def gemini_reply(
    text: str | None = "hello",
    *,
    prompt: int = 10,
    cached: int | None = None,
    candidates: int | None = 5,
    thoughts: int | None = None,
    finish: str | None = "STOP",
    model_version: str = "gemini-3.8-flash",
    block_reason: str | None = None,
    continuation_token: str | None = None,
    usage: bool = True,
) -> Reply:
    """A generateContent response body in Gemini's JSON wire format (camelCase)."""
    body: dict[str, Any] = {"modelVersion": model_version, "responseId": "fake"}
    if block_reason is None:
        content: dict[str, Any] = {"role": "model"}
        if text is not None:
            content["parts"] = [{"text": "thinking...", "thought": True}, {"text": text}]
        candidate: dict[str, Any] = {"content": content, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        if continuation_token is not None:
            candidate["continuationToken"] = continuation_token
        body["candidates"] = [candidate]
    else:
        body["promptFeedback"] = {"blockReason": block_reason}
    if usage:
        meta: dict[str, Any] = {"promptTokenCount": prompt}
        for key, value in (
            ("cachedContentTokenCount", cached),
            ("candidatesTokenCount", candidates),
            ("thoughtsTokenCount", thoughts),
        ):
            if value is not None:
                meta[key] = value
        body["usageMetadata"] = meta
    reply = json_reply(body)
    fresh = prompt - (cached or 0)
    reply.bill = (fresh, 0, cached or 0, (candidates or 0) + (thoughts or 0))
    return reply


def gemini_call_reply(
    calls: list[tuple[str | None, str, dict[str, Any]]],
    *,
    signature: str = "c2lnbmVkLXRob3VnaHQ=",
    prompt: int = 10,
    candidates: int = 5,
    thoughts: int = 0,
    model_version: str = "gemini-3.8-flash",
) -> Reply:
    """A generateContent response whose model turn calls functions; the first call carries
    a thought signature (base64), as Gemini's thinking models send it."""
    parts: list[dict[str, Any]] = []
    for i, (call_id, name, args) in enumerate(calls):
        call: dict[str, Any] = {"name": name, "args": args}
        if call_id is not None:
            call["id"] = call_id
        part: dict[str, Any] = {"functionCall": call}
        if i == 0:
            part["thoughtSignature"] = signature
        parts.append(part)
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    meta = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    body = {"modelVersion": model_version, "responseId": "fake", "candidates": [candidate]}
    body["usageMetadata"] = meta
    reply = json_reply(body)
    reply.bill = (prompt, 0, 0, candidates + thoughts)
    return reply


def gemini_error(
    status: int,
    status_text: str,
    message: str = "",
    *,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    error: dict[str, Any] = {
        "code": status,
        "message": message or status_text,
        "status": status_text,
    }
    if details is not None:
        error["details"] = details
    return json_reply({"error": error}, status=status, headers=headers)


# --- OpenAI Chat Completions (and every compatible server) ---------------------------------


def openai_base(server: FakeLLMServer) -> str:
    """The base URL an OpenAI client is given for `server` (its batch routes live under it)."""
    return f"{server.url}/openai/v1"


def _openai_usage(prompt: int, cached: int | None, completion: int) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:  # many compatible servers send no prompt_tokens_details at all
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def _openai_calls(calls: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, n, a in calls
    ]


def openai_reply(
    text: str | None = "hello",
    *,
    model: str = "gpt-5.2",
    prompt: int = 10,
    cached: int | None = None,
    completion: int = 5,
    finish: str | None = "stop",
    calls: list[tuple[str, str, dict[str, Any]]] | None = None,
    refusal: str | None = None,
) -> Reply:
    """A chat.completion body. `cached` None sends no prompt_tokens_details (as vLLM and
    Ollama do); `calls` are tool calls (id, name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = _openai_calls(calls)
    if refusal is not None:
        message["refusal"] = refusal
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _openai_usage(prompt, cached, completion),
    }
    reply = json_reply(body)
    reply.bill = (prompt - (cached or 0), 0, cached or 0, completion)
    return reply


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": model,
        "choices": [choice],
    }


def openai_sse(
    text: str = "hello",
    *,
    model: str = "gpt-5.2",
    prompt: int = 10,
    cached: int | None = None,
    completion: int = 5,
    finish: str | None = "stop",
    calls: list[tuple[str, str, dict[str, Any]]] | None = None,
    usage: bool = True,
    pieces: int = 2,
    upto: int | None = None,
    error: dict[str, Any] | None = None,
    cut: bool = False,
) -> Reply:
    """A streamed chat completion: `text` in `pieces` content chunks, tool calls in pieces,
    the finish chunk, the usage chunk (only when `usage`, i.e. the server honours
    stream_options), then [DONE]. `upto` keeps the first N events (then `error`, an error
    event, if given); `cut` drops the connection after them."""
    events = [_chunk(model, {"role": "assistant", "content": ""})]
    size = max(1, -(-len(text) // pieces)) if text else 1
    events += [_chunk(model, {"content": text[i : i + size]}) for i in range(0, len(text), size)]
    for index, call in enumerate(_openai_calls(calls or [])):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        first = {"index": index, "id": call["id"], "type": "function"}
        first["function"] = {"name": call["function"]["name"], "arguments": arguments[:half]}
        events.append(_chunk(model, {"tool_calls": [first]}))
        rest = {"index": index, "function": {"arguments": arguments[half:]}}
        events.append(_chunk(model, {"tool_calls": [rest]}))
    events.append(_chunk(model, {}, finish))
    if usage:
        last = _chunk(model, {})
        last["choices"] = []
        last["usage"] = _openai_usage(prompt, cached, completion)
        events.append(last)
    lines = [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]
    if upto is not None:
        lines = lines[:upto]
    if error is not None:
        lines.append(f"data: {json.dumps({'error': error})}\n\n".encode())
    bill = (prompt - (cached or 0), 0, cached or 0, completion)
    return Reply(chunks=lines, content_type="text/event-stream", cut=cut, bill=bill)


def openai_error(
    status: int,
    message: str = "",
    *,
    error_type: str = "invalid_request_error",
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    error = {"message": message or error_type, "type": error_type, "param": None, "code": code}
    return json_reply({"error": error}, status=status, headers=headers)


# What the SDKs would read instead of the fakes' base URLs and keys: cleared for each test.
_VENDOR_VARIABLES = (
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_GENAI_API_VERSION",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_ADMIN_KEY",
)


@contextlib.contextmanager
def fake_vendors(
    monkeypatch: pytest.MonkeyPatch, anthropic_key: str, gemini_key: str
) -> Iterator[tuple[FakeLLMServer, FakeLLMServer]]:
    """A fake Anthropic and a fake Gemini, reached only through the SDKs' base-URL and key
    variables (which the harness's worker processes inherit)."""
    for name in _VENDOR_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
    monkeypatch.setenv("GEMINI_API_KEY", gemini_key)
    with FakeLLMServer() as anthropic, FakeLLMServer() as gemini:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.url)
        yield anthropic, gemini
