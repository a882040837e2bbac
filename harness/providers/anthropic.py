"""Anthropic adapter: one Messages API call over SSE, translated into a Completion.

Why streaming: the SDK refuses a non-streaming call whose max_tokens implies more than ten
minutes of generation, and a long silent request is what proxies cut. With a stream the
read timeout is per chunk (the API pings while it thinks) and a whole-stream deadline bounds
the call; the SDK's own accumulator rebuilds the final Message.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import anthropic
import httpx2

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
from harness.providers.errors import (
    account_error,
    auth_error,
    describe,
    gateway_lost,
    is_context_too_long,
    kind_for_status,
    malformed,
    not_a_reply,
    outcome_unknown,
    read_key,
    redact,
    retry_after_s,
    transport_error,
    with_billed_usage,
)

__all__ = ["AnthropicProvider", "message_params", "translate_message"]

NAME = "anthropic"
_CACHED = {"type": "ephemeral"}  # 5-minute cache: priced as `cache_write` in prices.yaml
# The SDK's own estimate of the slowest legitimate generation: an hour per 128k tokens.
_SECONDS_PER_OUTPUT_TOKEN = 3600 / 128_000
_STOP = {
    "end_turn": StopReason.END,
    "stop_sequence": StopReason.END,
    "max_tokens": StopReason.MAX_TOKENS,
    "refusal": StopReason.REFUSAL,
    # Generation ran into the context window: the prompt leaves too little room.
    "model_context_window_exceeded": StopReason.CONTEXT_TOO_LONG,
}
# 429s that waiting will not fix: the account is out of money until someone acts.
_ACCOUNT_CODES = {"contract_spend_limit_reached", "enforced_spend_limit_reached"}
# An account out of prepaid credit is refused with a 400 invalid_request_error ("Your credit
# balance is too low to access the Anthropic API..."): every later call would be too.
_NO_CREDIT = re.compile(r"credit balance is too low", re.IGNORECASE)
_RETRYABLE = (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError, RuntimeError)


class AnthropicProvider(Provider):
    """Claude through the `anthropic` SDK, SDK retries off (Caller owns retries).

    The base URL is never passed: the SDK reads ANTHROPIC_BASE_URL itself (gateways).
    """

    name = NAME

    def __init__(self, api_key: str, *, timeout_s: float, key_source: str = "api_key") -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self._key = api_key  # kept only to scrub it from any error text
        self._key_source = key_source
        self._timeout_s = timeout_s
        self._deadline = ReadDeadline()
        self._client = anthropic.Anthropic(
            api_key=api_key,
            max_retries=0,
            timeout=httpx2.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            http_client=anthropic.DefaultHttpxClient(
                event_hooks={"response": [self._deadline.hook]}
            ),
        )

    @property
    def client(self) -> Any:
        """The SDK client (retries off, timeouts set), shared with this vendor's batches."""
        return self._client

    @classmethod
    def from_env(cls, *, timeout_s: float) -> AnthropicProvider:
        """Read ANTHROPIC_API_KEY; MissingKeyError (naming it) when it is not set."""
        key, source = read_key("ANTHROPIC_API_KEY", provider=NAME)
        return cls(key, timeout_s=timeout_s, key_source=source)

    def complete(self, request: CallRequest) -> Completion:
        """One streamed call; outcome-like stops are Completions, faults are ProviderErrors."""
        started = time.monotonic()
        route = request.route
        deadline = started + max(self._timeout_s, route.max_tokens * _SECONDS_PER_OUTPUT_TOKEN)
        try:
            # The deadline is also checked per event, but keep-alive comments are no events.
            with self._deadline.within(deadline - started):
                message = self._stream(message_params(request), deadline)
        except anthropic.APIStatusError as exc:
            if is_context_too_long(exc.status_code, _api_message(exc)):
                return _outcome(
                    StopReason.CONTEXT_TOO_LONG,
                    route.model,
                    started,
                    redact(_api_message(exc), self._key),
                )
            raise self.classify(exc, route.model) from exc
        except anthropic.APIConnectionError as exc:  # includes APITimeoutError
            cause = exc.__cause__ or exc
            raise transport_error(cause, NAME) or ProviderError(
                ErrorKind.TRANSIENT,
                f"connection failed ({type(exc).__name__})",
                provider=NAME,
                outcome_unknown=True,  # not known to have failed before the request was sent
                transport=True,
            ) from exc
        return translate_message(message, route.model, started)

    def _stream(self, params: dict[str, Any], deadline: float) -> Any:
        """Read the whole event stream; a cut, stalled or garbled stream is a ProviderError."""
        with self._client.messages.stream(**params) as stream:
            kind = stream.response.headers.get("content-type", "")
            if not kind.startswith("text/event-stream"):
                what = (
                    f"expected an event stream, got {kind or 'no content-type'}"
                    " (does the gateway pass streaming through?)"
                )
                vendors = _a_message(stream.response)  # the vendor's, un-streamed: billed
                raise malformed(NAME, what) if vendors else not_a_reply(NAME, what)
            began = ended = False
            try:
                for event in stream:
                    began = began or event.type == "message_start"
                    ended = ended or event.type == "message_stop"
                    if time.monotonic() > deadline:
                        raise ProviderError(
                            ErrorKind.TRANSIENT, "stream deadline passed", provider=NAME
                        )
                if not began:
                    raise malformed(NAME, "the stream had no message_start event")
                if not ended:
                    raise malformed(NAME, "the stream ended before message_stop")
                return stream.get_final_message()
            # The vendor accepted the request and may have generated (and billed) the whole
            # reply: the snapshot's usage is a lower bound, so every failure here is unknown.
            except ProviderError as exc:
                raise _cut(exc, stream, began) from None
            except anthropic.APIStatusError as exc:  # an `error` event in the stream
                raise _cut(self.classify(exc, params["model"]), stream, began) from exc
            except httpx2.HTTPError as exc:  # the SDK does not wrap errors read mid-stream
                error = transport_error(exc, NAME) or malformed(NAME, type(exc).__name__)
                raise _cut(error, stream, began) from exc
            except _MALFORMED as exc:
                raise _cut(malformed(NAME, describe(exc)), stream, began) from exc

    def classify(self, exc: anthropic.APIStatusError, model: str) -> ProviderError:
        """HTTP status (or an in-stream error's type) → how the retry policy treats it."""
        status = exc.status_code
        error_type = exc.type or ""
        text = redact(f"{error_type}: {_api_message(exc)}".strip(": "), self._key)
        if _cannot_pay(status, error_type, exc.error_code, text):
            return account_error(NAME, text, status, "the Anthropic console (billing, limits)")
        kind = kind_for_status(status) if status != 200 else _kind_for_type(error_type)
        hint = exc.response.headers.get("x-should-retry")
        if kind in (ErrorKind.TRANSIENT, ErrorKind.FATAL) and hint in ("true", "false"):
            kind = ErrorKind.TRANSIENT if hint == "true" else ErrorKind.FATAL
        if kind is ErrorKind.AUTH:
            return auth_error(NAME, self._key_source, text, status)
        if status == 404:
            text = f"{text} (is model {model!r} retired or misspelt? see prices.yaml)"
        # A server's wait hint is honoured for any retryable fault (529s may carry one too).
        wait = retry_after_s(exc.response.headers) if kind in _RETRYABLE else None
        lost = gateway_lost(status)
        return ProviderError(kind, text, status, wait, provider=NAME, outcome_unknown=lost)


def message_params(request: CallRequest) -> dict[str, Any]:
    """Messages API arguments: the stable prefix carries the cache breakpoint, the rest not.

    The breakpoint on the stable block caches everything before it too (the system prompt),
    so a task's later attempts read system + reference + tests from cache. A route with
    `prompt_cache` off sends no breakpoint: nothing is written to or read from the cache.
    """
    prompt, route = request.prompt, request.route
    blocks: list[dict[str, Any]] = []
    if prompt.stable:
        cached = {"cache_control": _CACHED} if route.prompt_cache else {}
        blocks.append({"type": "text", "text": prompt.stable, **cached})
    if prompt.variable:
        blocks.append({"type": "text", "text": prompt.variable})
    if not blocks:
        raise ProviderError(ErrorKind.FATAL, "empty prompt: nothing to send", provider=NAME)
    params: dict[str, Any] = {
        "model": route.model,
        "max_tokens": route.max_tokens,
        "messages": [{"role": "user", "content": blocks}, *_rounds(request.rounds)],
    }
    if prompt.system:
        params["system"] = [{"type": "text", "text": prompt.system}]
    if request.tools:  # the same array on every call of the task, so the cache holds
        params["tools"] = [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": json.loads(t.schema_json),
            }
            for t in request.tools
        ]
        params["tool_choice"] = {"type": "none" if request.tools_final else "auto"}
    return params


def _rounds(rounds: tuple[ToolRound, ...]) -> list[dict[str, Any]]:
    """Each earlier round: the assistant turn exactly as it came (thinking signatures and
    tool_use ids included), then one user turn with every call's result, in order."""
    messages: list[dict[str, Any]] = []
    for done in rounds:
        messages.append({"role": "assistant", "content": json.loads(done.turn)})
        results = [
            {
                "type": "tool_result",
                "tool_use_id": r.call_id,
                "content": r.content,
                **({"is_error": True} if r.is_error else {}),
            }
            for r in done.results
        ]
        messages.append({"role": "user", "content": results})
    return messages


def translate_message(message: Any, model: str, started: float) -> Completion:
    """Final Message → Completion. Usage is already split the way we bill it.

    Anthropic's `input_tokens` EXCLUDES cache tokens (fresh input only); cache writes and
    reads come separately; `output_tokens` includes thinking tokens, billed as output.
    """
    usage = _usage(message.usage)
    reason = message.stop_reason
    calls = [b for b in message.content if b.type == "tool_use"]
    if reason == "tool_use" and calls:
        turn = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
        text = encode_tool_turn(turn, [_call(b) for b in calls])
        return Completion(
            text, usage, StopReason.TOOL_USE, message.model or model, NAME,
            time.monotonic() - started,
        )  # fmt: skip
    text = "".join(block.text for block in message.content if block.type == "text")
    stop = _STOP.get(reason, StopReason.MAX_TOKENS)  # tool_use/pause_turn: reply incomplete
    detail = "" if stop is StopReason.END else str(reason)
    details = getattr(message, "stop_details", None)
    if details is not None and (details.category or details.explanation):
        detail = f"{reason}: {details.category or ''} {details.explanation or ''}".strip()
    return Completion(
        text, usage, stop, message.model or model, NAME, time.monotonic() - started, detail=detail
    )


def _call(block: Any) -> ToolCall:
    return ToolCall(block.id, block.name, json.dumps(block.input, sort_keys=True))


def _usage(raw: Any) -> Usage:
    return Usage(
        input_tokens=raw.input_tokens or 0,
        cache_write_tokens=raw.cache_creation_input_tokens or 0,
        cache_read_tokens=raw.cache_read_input_tokens or 0,
        output_tokens=raw.output_tokens or 0,
    )


def _cut(error: ProviderError, stream: Any, began: bool) -> ProviderError:
    """A stream that failed after the request was accepted: billed at least its snapshot.
    The server answered (its headers arrived), so this is no transport failure."""
    error.transport = False
    return outcome_unknown(with_billed_usage(error, _snapshot_usage(stream, began)))


def _a_message(response: Any) -> bool:
    """Whether a body that is no event stream may still be the vendor's message (a gateway
    that ignored `stream`): JSON with the vendor's `usage`, or a JSON object cut or garbled
    on the way. An HTML page, an empty body or JSON without `usage` is not."""
    try:
        raw = response.read()
    except httpx2.HTTPError:
        return True  # a body cut on the way: whose it was is unknown
    try:
        body = json.loads(raw or b"null")
    except ValueError:
        return raw.lstrip().startswith(b"{")
    return isinstance(body, dict) and isinstance(body.get("usage"), dict)


def _snapshot_usage(stream: Any, began: bool) -> Usage:
    """What a broken stream had already been billed for, as far as its events said."""
    if not began:
        return Usage()
    try:
        return _usage(stream.current_message_snapshot.usage)
    except Exception:  # a garbled snapshot: nothing trustworthy to add
        return Usage()


def _outcome(stop: StopReason, model: str, started: float, detail: str) -> Completion:
    return Completion("", Usage(), stop, model, NAME, time.monotonic() - started, detail=detail)


def _api_message(exc: anthropic.APIStatusError) -> str:
    return exc.api_message or exc.message


def _cannot_pay(status: int, error_type: str, code: str | None, text: str) -> bool:
    """The account, not this request, is refused: billing, a spend limit, no credit left."""
    if status == 402 or error_type == "billing_error" or code in _ACCOUNT_CODES:
        return True
    return status == 400 and bool(_NO_CREDIT.search(text))


def _kind_for_type(error_type: str) -> ErrorKind:
    """An error event inside a 200 stream carries only the error's type."""
    if error_type == "rate_limit_error":
        return ErrorKind.RATE_LIMIT
    if error_type in ("overloaded_error", "api_error", "timeout_error", ""):
        return ErrorKind.TRANSIENT
    if error_type in ("authentication_error", "permission_error"):
        return ErrorKind.AUTH
    return ErrorKind.FATAL
