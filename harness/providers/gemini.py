"""Gemini adapter: generate_content through `google-genai`, translated into a Completion.

One SDK call is one HTTP request here: the SDK's retries (no retry options), automatic
function calling and automatic continuation are all off. A reply the server splits with
finish reason CONTINUATION is followed by this adapter, a bounded number of hops, so every
billed hop is counted and a failure part-way reports what was already billed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from harness.providers._errors import (
    account_error,
    auth_error,
    describe,
    gateway_lost,
    is_context_too_long,
    kind_for_status,
    malformed,
    read_key,
    redact,
    retry_after_s,
    rpc_retry_delay_s,
    transport_error,
    with_billed_usage,
)
from harness.providers.base import (
    CallRequest,
    Completion,
    ErrorKind,
    ProviderError,
    StopReason,
    Usage,
)

__all__ = ["GeminiProvider"]

NAME = "gemini"
_F = types.FinishReason
_INCOMPLETE = {None, _F.FINISH_REASON_UNSPECIFIED}
_BAD_KEY = re.compile(r"API_KEY_INVALID|API key not valid|API key expired", re.IGNORECASE)
# Out of money, not out of rate: waiting will not help. ("...check your plan and billing
# details" is Google's ordinary per-minute quota text, so "billing" alone is not a sign.)
_NO_FUNDS = re.compile(r"spending cap|spend(ing)? limit|prepaid (credit|balance)", re.IGNORECASE)
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError)


class GeminiProvider:
    """Gemini through the `google-genai` SDK (Gemini Developer API, API key).

    The client is kept on the provider for its whole life: it closes its HTTP client when
    garbage-collected. The base URL is never passed: the SDK reads GOOGLE_GEMINI_BASE_URL.
    """

    name = NAME

    def __init__(
        self, api_key: str, *, timeout_s: float, key_source: str = "api_key", max_hops: int = 4
    ) -> None:
        if timeout_s <= 0 or max_hops < 1:
            raise ValueError(f"need timeout_s > 0 and max_hops >= 1, got {timeout_s}, {max_hops}")
        self._key = api_key  # kept only to scrub it from any error text
        self._key_source = key_source
        self._max_hops = max_hops
        # Requests one call may make (continuation hops): the caller reserves for all of them.
        self.requests_per_call = max_hops
        # HttpOptions.timeout is in MILLISECONDS (and unset means no timeout at all).
        options = types.HttpOptions(timeout=max(1, round(timeout_s * 1000)))
        self._client = genai.Client(api_key=api_key, vertexai=False, http_options=options)

    @classmethod
    def from_env(cls, *, timeout_s: float) -> GeminiProvider:
        """Read GEMINI_API_KEY, else GOOGLE_API_KEY; MissingKeyError naming both when unset."""
        key, source = read_key("GEMINI_API_KEY", "GOOGLE_API_KEY", provider=NAME)
        return cls(key, timeout_s=timeout_s, key_source=source)

    def complete(self, request: CallRequest) -> Completion:
        """One call (plus continuation hops); outcomes are Completions, faults ProviderErrors."""
        started = time.monotonic()
        route, config, contents = request.route, _config(request), _contents(request)
        usage, texts, token = Usage(), [], None
        try:
            for _ in range(self._max_hops):
                hop = self._hop(route.model, contents, config, token, usage)
                usage, token = usage + hop.usage, hop.token
                texts.append(hop.text)
                if token is None:
                    break
            else:
                hop = _Hop(
                    Usage(),
                    "",
                    StopReason.MAX_TOKENS,
                    f"CONTINUATION: unfinished after {self._max_hops} requests",
                    None,
                    None,
                )
        except _Outcome as outcome:
            usage, texts = usage + outcome.usage, []
            hop = _Hop(Usage(), "", outcome.stop, outcome.detail, None, None)
        return Completion(
            "".join(texts),
            usage,
            hop.stop,
            hop.model or route.model,
            NAME,
            time.monotonic() - started,
            detail=hop.detail,
        )

    def _hop(
        self,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
        token: bytes | None,
        billed: Usage,
    ) -> _Hop:
        """One HTTP request. Errors carry `billed`, the usage of the hops before this one."""
        if token is not None:
            config = config.model_copy(update={"continuation_token": token})
        try:
            response = self._client.models.generate_content(
                model=model, contents=contents, config=config
            )
            return _read(response)
        except genai_errors.APIError as exc:
            message = redact(exc.message or str(exc), self._key)
            if is_context_too_long(exc.code, message):
                raise _Outcome(StopReason.CONTEXT_TOO_LONG, message) from exc
            raise with_billed_usage(self._api_error(exc, message, model), billed) from exc
        except _Outcome:
            raise
        except ProviderError as exc:
            raise with_billed_usage(exc, billed) from None
        except Exception as exc:  # raw httpx2 errors, JSON errors on a 200, odd bodies
            error = transport_error(exc, NAME)
            if error is None and not isinstance(exc, _MALFORMED):
                raise
            raise with_billed_usage(error or malformed(NAME, describe(exc)), billed) from exc

    def _api_error(self, exc: genai_errors.APIError, message: str, model: str) -> ProviderError:
        """HTTP status and Google's status string → how the retry policy treats it."""
        code, status = exc.code, exc.status or ""
        text = f"{status}: {message}".strip(": ")
        if code == 400 and _BAD_KEY.search(str(exc.details)):
            code = 401
        if code == 429 and _NO_FUNDS.search(message):
            return account_error(NAME, text, code, "Google AI Studio (billing, spending cap)")
        kind = kind_for_status(code)
        if kind is ErrorKind.AUTH:
            return auth_error(NAME, self._key_source, text, exc.code)
        if code == 404:
            text = f"{text} (is model {model!r} retired or misspelt? see prices.yaml)"
        wait = None
        if kind in (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT):  # a server's hint, if any
            wait = retry_after_s(getattr(exc.response, "headers", None))
            wait = rpc_retry_delay_s(exc.details) if wait is None else wait
        lost = gateway_lost(exc.code)
        return ProviderError(kind, text, exc.code, wait, provider=NAME, outcome_unknown=lost)


@dataclass(frozen=True)
class _Hop:
    """One request's share of a call; `token` set means the reply continues in another."""

    usage: Usage
    text: str
    stop: StopReason
    detail: str
    token: bytes | None
    model: str | None


class _Outcome(Exception):
    """No reply to ship, but nothing to retry either: the prompt was blocked or too long."""

    def __init__(self, stop: StopReason, detail: str, usage: Usage | None = None) -> None:
        super().__init__(detail)
        self.stop, self.detail, self.usage = stop, detail, usage or Usage()


def _config(request: CallRequest) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        system_instruction=request.prompt.system or None,
        max_output_tokens=request.route.max_tokens,
        candidate_count=1,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        automatic_continuation=False,
    )


def _contents(request: CallRequest) -> list[types.Content]:
    """Stable prefix first, then the per-attempt part: Gemini caches identical prefixes
    implicitly, so a task's later attempts are billed the cached rate for the prefix."""
    prompt = request.prompt
    parts = [types.Part(text=t) for t in (prompt.stable, prompt.variable) if t]
    if not parts:
        raise ProviderError(ErrorKind.FATAL, "empty prompt: nothing to send", provider=NAME)
    return [types.Content(role="user", parts=parts)]


def _read(response: Any) -> _Hop:
    """One response → _Hop; raises _Outcome (prompt blocked) or a malformed-body error."""
    usage = _usage(response.usage_metadata)
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        reason = getattr(feedback.block_reason, "value", feedback.block_reason)
        detail = f"prompt blocked: {reason} {feedback.block_reason_message or ''}".strip()
        raise _Outcome(StopReason.REFUSAL, detail, usage)
    if usage is None:
        raise malformed(NAME, "no usage_metadata, so the call cannot be priced")
    if not response.candidates:
        raise malformed(NAME, "no candidates", usage)
    candidate = response.candidates[0]
    finish = candidate.finish_reason
    if finish in _INCOMPLETE:
        raise malformed(NAME, "no finish reason", usage)
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    # Thought parts are the model's reasoning (billed, see _usage); the reply excludes them.
    text = "".join(p.text for p in parts if p.text and not p.thought)
    token = candidate.continuation_token if finish is _F.CONTINUATION else None
    stop, detail = _stop(finish, candidate.finish_message)
    return _Hop(usage, text, stop, detail, token or None, response.model_version)


def _usage(meta: Any) -> Usage | None:
    """Gemini usage_metadata → Usage, or None when absent.

    promptTokenCount INCLUDES cachedContentTokenCount, so fresh input = prompt - cached;
    tool-use prompt tokens are input too. candidatesTokenCount EXCLUDES thoughtsTokenCount,
    which is billed as output, so output = candidates + thoughts. Implicit caching has no
    separate write charge: a first-time prefix is billed as fresh input.
    """
    if meta is None:
        return None
    cached = meta.cached_content_token_count or 0
    prompt = (meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        cache_read_tokens=cached,
        output_tokens=(meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0),
    )


def _stop(finish: Any, message: str | None) -> tuple[StopReason, str]:
    """STOP is the only clean end; MAX_TOKENS is truncation; every other finish reason
    (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, LANGUAGE, OTHER, ...) means
    no usable reply, recorded as a refusal with Google's own words."""
    if finish is _F.STOP:
        return StopReason.END, ""
    name = getattr(finish, "value", str(finish))
    detail = f"{name}: {message}" if message else name
    truncated = finish is _F.MAX_TOKENS or finish is _F.CONTINUATION
    return (StopReason.MAX_TOKENS if truncated else StopReason.REFUSAL), detail
