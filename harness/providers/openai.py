"""OpenAI adapter: one Chat Completions call through the `openai` SDK, translated into a
Completion. It serves OpenAI itself (the built-in `openai` endpoint) and every server that
speaks the same wire format (a named endpoint: a gateway, vLLM, Ollama, llama.cpp's server).

Why streaming for a long call (`max_tokens` above STREAM_ABOVE_TOKENS): a long silent
request is what proxies cut, and a local server may take many minutes for a long reply; with
a stream the read timeout is per chunk and a whole-stream deadline bounds the call. A short
call (a review) is one plain request. Compatible servers differ in ways that break a naive
client; each is handled where it is met (docs/providers.md, "OpenAI-compatible servers"):
- a stream carries no `usage` unless asked: every stream asks (`stream_options`);
- `prompt_tokens_details` may be missing: then no token was a cache hit;
- `finish_reason: length` is an outcome (MAX_TOKENS), never an exception;
- a server may ignore `max_tokens`: a stream is closed once it has sent more pieces than
  `max_tokens` allows, and the try is an outcome charged its whole reservation.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai

from harness.llm import (
    CallRequest,
    Completion,
    ErrorKind,
    Provider,
    ProviderError,
    StopReason,
    ToolCall,
    ToolRound,
    Usage,
    encode_tool_turn,
)
from harness.providers.deadline import ReadDeadline
from harness.providers.endpoint import Endpoint
from harness.providers.errors import (
    account_error,
    auth_error,
    describe,
    gateway_lost,
    is_context_too_long,
    kind_for_status,
    malformed,
    outcome_unknown,
    read_key,
    redact,
    retry_after_s,
    transport_error,
    with_billed_usage,
)

__all__ = [
    "STREAM_ABOVE_TOKENS",
    "OpenAIProvider",
    "chat_params",
    "endpoint_key",
    "reply_of",
    "translate",
]

# A call whose output cap is above this streams (see the module docstring).
STREAM_ABOVE_TOKENS = 4096
# The slowest legitimate generation, as the Anthropic adapter bounds it: an hour per 128k.
_SECONDS_PER_OUTPUT_TOKEN = 3600 / 128_000
# Pieces (content or tool-call deltas) a stream may send beyond max_tokens before it is
# taken for a server that ignores max_tokens: a piece is usually one token, never less.
_OVERRUN_SLACK = 64
# What a key-less endpoint sends as its key: the SDK insists on one; local servers ignore it.
NO_KEY = "no-key"
_STOP = {
    "stop": StopReason.END,
    "eos": StopReason.END,  # older compatible servers (TGI) name the end of sequence
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.REFUSAL,
}
_TOOL_STOPS = ("tool_calls", "function_call", "stop")  # some servers end tool turns with stop
# Errors that say the account, not this request, cannot be served: waiting will not help.
_ACCOUNT_CODES = {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"}
_TOO_LONG_CODES = {"context_length_exceeded"}
_RETRYABLE = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError)


class OpenAIProvider(Provider):
    """Chat Completions on one endpoint through the `openai` SDK, SDK retries off (Caller
    owns retries). `name` is the endpoint's: the routes, slots and prices use it."""

    def __init__(
        self, endpoint: Endpoint, api_key: str, *, timeout_s: float, key_source: str
    ) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.name = endpoint.name
        self._builtin = endpoint.builtin
        self._key = api_key  # kept only to scrub it from any error text
        self._key_source = key_source
        self._timeout_s = timeout_s
        self._deadline = ReadDeadline()
        # A named endpoint is another server: OpenAI's organization and project stay home.
        headers: dict[str, Any] = {}
        if not endpoint.builtin:
            headers = {"OpenAI-Organization": openai.Omit(), "OpenAI-Project": openai.Omit()}
        where = {} if endpoint.base_url is None else {"base_url": endpoint.base_url}
        self._client = openai.OpenAI(
            api_key=api_key or NO_KEY,
            max_retries=0,
            timeout=httpx2.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            http_client=openai.DefaultHttpxClient(event_hooks={"response": [self._deadline.hook]}),
            default_headers=headers,
            **where,
        )

    @property
    def client(self) -> Any:
        """The SDK client (retries off, timeouts set), shared with this endpoint's batches."""
        return self._client

    @classmethod
    def from_endpoint(cls, endpoint: Endpoint, *, timeout_s: float) -> OpenAIProvider:
        """Keyed from the endpoint's variable (MissingKeyError naming it when unset)."""
        key, source = endpoint_key(endpoint)
        return cls(endpoint, key, timeout_s=timeout_s, key_source=source)

    def complete(self, request: CallRequest) -> Completion:
        """One call (streamed when long); outcome-like stops are Completions, faults are
        ProviderErrors."""
        started = time.monotonic()
        route = request.route
        params = chat_params(request, builtin=self._builtin)
        deadline = started + max(self._timeout_s, route.max_tokens * _SECONDS_PER_OUTPUT_TOKEN)
        try:
            with self._deadline.within(deadline - started):
                if route.max_tokens > STREAM_ABOVE_TOKENS:
                    reply = self._stream(params, route.max_tokens, deadline)
                else:
                    reply = self._once(params)
        except openai.APIStatusError as exc:
            message = redact(_api_message(exc), self._key)
            if exc.code in _TOO_LONG_CODES or is_context_too_long(exc.status_code, message):
                return _outcome(StopReason.CONTEXT_TOO_LONG, route.model, self.name, message)
            raise self.classify(exc, route.model) from exc
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise self.connection_error(exc) from exc
        return translate(reply, route.model, self.name, time.monotonic() - started)

    def _once(self, params: dict[str, Any]) -> Reply:
        """A plain request; a 200 whose body cannot be read was billed, by how much unknown."""
        try:
            return reply_of(self._client.chat.completions.create(**params))
        except (openai.APIResponseValidationError, *_MALFORMED) as exc:
            raise malformed(self.name, describe(exc)) from exc

    def _stream(self, params: dict[str, Any], max_tokens: int, deadline: float) -> Reply:
        """Read the whole stream; a cut, stalled or garbled stream is a ProviderError."""
        params = {**params, "stream": True, "stream_options": {"include_usage": True}}
        reply = Reply()
        with self._client.chat.completions.create(**params) as chunks:
            kind = chunks.response.headers.get("content-type", "")
            if not kind.startswith("text/event-stream"):
                raise malformed(
                    self.name,
                    f"expected an event stream, got {kind or 'no content-type'}"
                    " (does the gateway pass streaming through?)",
                )
            try:
                for chunk in chunks:
                    reply.add(chunk)
                    if time.monotonic() > deadline:
                        raise ProviderError(
                            ErrorKind.TRANSIENT, "stream deadline passed", provider=self.name
                        )
                    if reply.pieces > max_tokens + _OVERRUN_SLACK:
                        reply.overrun = max_tokens
                        break  # closing the stream stops the server's generation
                if not reply.began:
                    raise malformed(self.name, "the stream had no chunk")
                return reply
            # The server accepted the request and may have generated (and billed) the whole
            # reply: the usage seen so far is a lower bound, so every failure here is unknown.
            except ProviderError as exc:
                raise _cut(exc, reply) from None
            except openai.APIError as exc:  # an error inside the stream
                raise _cut(self._in_stream(exc), reply) from exc
            except httpx2.HTTPError as exc:
                error = transport_error(exc, self.name) or malformed(self.name, type(exc).__name__)
                raise _cut(error, reply) from exc
            except _MALFORMED as exc:
                raise _cut(malformed(self.name, describe(exc)), reply) from exc

    def classify(self, exc: openai.APIStatusError, model: str) -> ProviderError:
        """HTTP status and the error's code → how the retry policy treats it."""
        status, code = exc.status_code, exc.code or ""
        text = redact(f"{code or exc.type or ''}: {_api_message(exc)}".strip(": "), self._key)
        if status == 402 or code in _ACCOUNT_CODES or exc.type in _ACCOUNT_CODES:
            where = "the account's billing and limits" + (
                " (platform.openai.com)" if self._builtin else f" at endpoint {self.name!r}"
            )
            return account_error(self.name, text, status, where)
        kind = kind_for_status(status)
        hint = exc.response.headers.get("x-should-retry")
        if kind in (ErrorKind.TRANSIENT, ErrorKind.FATAL) and hint in ("true", "false"):
            kind = ErrorKind.TRANSIENT if hint == "true" else ErrorKind.FATAL
        if kind is ErrorKind.AUTH:
            return auth_error(self.name, self._key_source, text, status)
        if status == 404:
            text = f"{text} (is model {model!r} served there, and spelt as it is? see prices)"
        wait = retry_after_s(exc.response.headers) if kind in _RETRYABLE else None
        lost = gateway_lost(status)
        return ProviderError(kind, text, status, wait, provider=self.name, outcome_unknown=lost)

    def _in_stream(self, exc: openai.APIError) -> ProviderError:
        """An error event inside a 200 stream carries only the error's code and type."""
        text = redact(f"{exc.code or exc.type or 'error'}: {exc.message}", self._key)
        limited = "rate_limit" in f"{exc.code} {exc.type}"
        kind = ErrorKind.RATE_LIMIT if limited else ErrorKind.TRANSIENT
        return ProviderError(kind, text, 200, provider=self.name)

    def connection_error(self, exc: openai.APIConnectionError) -> ProviderError:
        """A request that reached no answer: how far it got decides what may be billed."""
        cause = exc.__cause__ or exc
        return transport_error(cause, self.name) or ProviderError(
            ErrorKind.TRANSIENT,
            f"connection failed ({type(exc).__name__})",
            provider=self.name,
            outcome_unknown=True,  # not known to have failed before the request was sent
            transport=True,
        )


def endpoint_key(endpoint: Endpoint) -> tuple[str, str]:
    """(key, where it came from): the endpoint's variable (MissingKeyError naming it when
    unset), or no key at all when the endpoint names none."""
    if endpoint.api_key_env is None:
        return "", f"no key (endpoints.{endpoint.name}.api_key_env is not set)"
    return read_key(endpoint.api_key_env, provider=endpoint.name)


def chat_params(request: CallRequest, *, builtin: bool) -> dict[str, Any]:
    """Chat Completions arguments: system, then one user message whose stable prefix comes
    first (OpenAI and vLLM cache an identical prefix on their own), then earlier tool rounds.

    The user message is one string, not content parts: older compatible servers read only
    strings, and a prefix cache sees the same tokens either way. OpenAI itself takes
    `max_completion_tokens` (its reasoning models refuse `max_tokens`) and a prompt cache key
    (the prefix's digest, so a task's calls reach the same cache); a compatible server takes
    `max_tokens`, the field every one of them reads.
    """
    prompt, route = request.prompt, request.route
    if not prompt.text:
        raise ProviderError(
            ErrorKind.FATAL, "empty prompt: nothing to send", provider=route.provider
        )
    messages: list[dict[str, Any]] = []
    if prompt.system:
        messages.append({"role": "system", "content": prompt.system})
    messages.append({"role": "user", "content": prompt.text})
    messages += _rounds(request.rounds)
    params: dict[str, Any] = {"model": route.model, "messages": messages}
    if builtin:
        params["max_completion_tokens"] = route.max_tokens
        if route.prompt_cache and prompt.stable:
            prefix = f"{prompt.system}\x00{prompt.stable}".encode()
            params["prompt_cache_key"] = hashlib.sha256(prefix).hexdigest()[:32]
    else:
        params["max_tokens"] = route.max_tokens
    if request.tools:  # the same array on every call of the task, so the prefix holds
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": json.loads(t.schema_json),
                },
            }
            for t in request.tools
        ]
        params["tool_choice"] = "none" if request.tools_final else "auto"
    return params


def _rounds(rounds: tuple[ToolRound, ...]) -> list[dict[str, Any]]:
    """Each earlier round: the assistant turn as it came, then one `tool` message per call.
    The wire has no error flag for a result, so a refusal says so in its text."""
    messages: list[dict[str, Any]] = []
    for done in rounds:
        messages.append(json.loads(done.turn))
        for r in done.results:
            content = f"error: {r.content}" if r.is_error else r.content
            messages.append({"role": "tool", "tool_call_id": r.call_id, "content": content})
    return messages


@dataclass
class Reply:
    """One reply as read, from a plain body or accumulated from a stream's chunks."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)  # index → id, name, args
    finish_reason: str | None = None
    refusal: str = ""
    usage: Any = None  # the SDK's CompletionUsage, when the server sent one
    model: str = ""
    began: bool = False
    pieces: int = 0  # content and tool-call deltas seen (a piece is at least a token)
    overrun: int = 0  # the max_tokens the server ignored, when the stream was closed for it

    def add(self, chunk: Any) -> None:
        """Fold one stream chunk in (the usage chunk has no choices)."""
        self.began = True
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            self.usage = chunk.usage
        for choice in chunk.choices[:1] if chunk.choices else ():
            delta = choice.delta
            if delta.content:
                self.text.append(delta.content)
                self.pieces += 1
            if getattr(delta, "refusal", None):
                self.refusal += delta.refusal
            for call in delta.tool_calls or ():
                self.pieces += 1
                into = self.calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                into["id"] = call.id or into["id"]
                if call.function is not None:
                    into["name"] += call.function.name or ""
                    into["arguments"] += call.function.arguments or ""
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason


def reply_of(completion: Any) -> Reply:
    """A whole ChatCompletion (a plain reply, a batch entry's body) as a Reply."""
    reply = Reply(usage=completion.usage, model=completion.model or "", began=True)
    if not completion.choices:
        return reply
    choice = completion.choices[0]
    message = choice.message
    reply.finish_reason = choice.finish_reason
    reply.text = [message.content or ""]
    reply.refusal = getattr(message, "refusal", None) or ""
    for i, call in enumerate(message.tool_calls or ()):
        function = getattr(call, "function", None)
        if function is not None:
            reply.calls[i] = {"id": call.id, "name": function.name, "arguments": function.arguments}
    return reply


def translate(reply: Reply, model: str, provider: str, latency_s: float = 0.0) -> Completion:
    """Reply → Completion. Usage is split the way we bill it.

    OpenAI's `prompt_tokens` INCLUDES the cached tokens (`prompt_tokens_details.cached_tokens`,
    missing on many compatible servers: then none were cached), so fresh input is the
    difference; there is no cache write charge; `completion_tokens` includes reasoning tokens,
    billed as output.
    """
    usage, served = _usage(reply.usage), reply.model or model
    if reply.overrun:
        detail = (
            f"the server sent more than max_tokens ({reply.overrun}) allows: it ignores "
            "max_tokens, so the reply was cut off (docs/providers.md)"
        )
        text = "".join(reply.text)
        return Completion(
            text, usage, StopReason.MAX_TOKENS, served, provider, latency_s, detail=detail
        )
    if reply.calls and reply.finish_reason in _TOOL_STOPS:
        calls = [_call(i, c) for i, c in sorted(reply.calls.items())]
        turn = {
            "role": "assistant",
            "content": "".join(reply.text) or None,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_json},
                }
                for c in calls
            ],
        }
        text = encode_tool_turn(turn, calls)
        return Completion(text, usage, StopReason.TOOL_USE, served, provider, latency_s)
    if reply.refusal:
        return Completion(
            "", usage, StopReason.REFUSAL, served, provider, latency_s, detail=reply.refusal
        )
    stop = _STOP.get(reply.finish_reason or "", StopReason.MAX_TOKENS)  # unknown: incomplete
    detail = "" if stop is StopReason.END else f"finish_reason {reply.finish_reason}"
    text = "".join(reply.text)
    return Completion(text, usage, stop, served, provider, latency_s, detail=detail)


def _call(index: int, call: dict[str, str]) -> ToolCall:
    """A tool call; arguments that are not a JSON object are passed on as text, so the
    tool refuses them with a reason the model can read."""
    raw = call.get("arguments") or "{}"
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    arguments = parsed if isinstance(parsed, dict) else {"unparsed_arguments": raw}
    call_id = call.get("id") or f"call_{index}"  # some servers send no id
    return ToolCall(call_id, call.get("name", ""), json.dumps(arguments, sort_keys=True))


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    prompt = raw.prompt_tokens or 0
    details = getattr(raw, "prompt_tokens_details", None)
    cached = min(prompt, (details.cached_tokens or 0) if details is not None else 0)
    return Usage(
        input_tokens=prompt - cached,
        cache_read_tokens=cached,
        output_tokens=raw.completion_tokens or 0,
    )


def _cut(error: ProviderError, reply: Reply) -> ProviderError:
    """A stream that failed after the request was accepted: billed at least what its usage
    said, if it got that far. The server answered, so this is no transport failure."""
    error.transport = False
    return outcome_unknown(with_billed_usage(error, _usage(reply.usage)))


def _outcome(stop: StopReason, model: str, provider: str, detail: str) -> Completion:
    return Completion("", Usage(), stop, model, provider, detail=detail)


def _api_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return exc.message
