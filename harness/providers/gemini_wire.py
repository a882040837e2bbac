"""Gemini requests built and responses read: shared by the interactive and batch adapters,
so a batch entry is the same request, and its reply is translated the same way."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from google.genai import types

from harness.llm import (
    CallRequest,
    ErrorKind,
    ProviderError,
    ServiceTier,
    StopReason,
    ToolCall,
    ToolRound,
    ToolSpec,
    Usage,
    encode_tool_turn,
)
from harness.providers.errors import malformed, not_a_reply

__all__ = [
    "NAME",
    "Hop",
    "Outcome",
    "build_config",
    "build_contents",
    "read_response",
    "usage_of",
]

NAME = "gemini"
_F = types.FinishReason
_INCOMPLETE = {None, _F.FINISH_REASON_UNSPECIFIED}
# What the response's usage_metadata.service_tier says served the request.
_SERVED = {
    types.ServiceTier.FLEX: ServiceTier.FLEX,
    types.ServiceTier.STANDARD: ServiceTier.STANDARD,
}


@dataclass(frozen=True)
class Hop:
    """One request's share of a call; `token` set means the reply continues in another.
    `tier` is what the vendor said served it (None when the response does not say)."""

    usage: Usage
    text: str
    stop: StopReason
    detail: str
    token: bytes | None
    model: str | None
    tier: ServiceTier | None = None


class Outcome(Exception):
    """No reply to ship, but nothing to retry either: the prompt was blocked or too long."""

    def __init__(self, stop: StopReason, detail: str, usage: Usage | None = None) -> None:
        super().__init__(detail)
        self.stop, self.detail, self.usage = stop, detail, usage or Usage()


def build_config(request: CallRequest, *, flex: bool = False) -> types.GenerateContentConfig:
    """The request's config; `flex` asks for Gemini Flex (`serviceTier: "flex"` on the wire,
    a top-level request field the SDK moves out of the config)."""
    return types.GenerateContentConfig(
        system_instruction=request.prompt.system or None,
        max_output_tokens=request.route.max_tokens,
        candidate_count=1,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        automatic_continuation=False,
        service_tier=types.ServiceTier.FLEX if flex else None,
        **_tool_config(request.tools, request.tools_final),
    )


def _tool_config(tools: tuple[ToolSpec, ...], final: bool) -> dict[str, Any]:
    """The function declarations (the same on every call of a task) and the calling mode:
    NONE forces an answer on the last round. No tools: no keys at all."""
    if not tools:
        return {}
    declarations = [
        types.FunctionDeclaration(
            name=t.name,
            description=t.description,
            parameters_json_schema=json.loads(t.schema_json),
        )
        for t in tools
    ]
    mode = types.FunctionCallingConfigMode.NONE if final else types.FunctionCallingConfigMode.AUTO
    return {
        "tools": [types.Tool(function_declarations=declarations)],
        "tool_config": types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(mode=mode)
        ),
    }


def build_contents(request: CallRequest) -> list[types.Content]:
    """Stable prefix first, then the per-attempt part: Gemini caches identical prefixes
    implicitly, so a task's later attempts are billed the cached rate for the prefix."""
    prompt = request.prompt
    parts = [types.Part(text=t) for t in (prompt.stable, prompt.variable) if t]
    if not parts:
        raise ProviderError(ErrorKind.FATAL, "empty prompt: nothing to send", provider=NAME)
    return [types.Content(role="user", parts=parts), *_rounds(request.rounds)]


def _rounds(rounds: tuple[ToolRound, ...]) -> list[types.Content]:
    """Each earlier round: the model turn exactly as it came (its thought signatures
    included, which Gemini requires back), then the function responses, in order."""
    contents: list[types.Content] = []
    for done in rounds:
        contents.append(types.Content.model_validate(json.loads(done.turn)))
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=r.call_id if not r.call_id.startswith(_UNNAMED) else None,
                    name=r.name,
                    response={"error": r.content} if r.is_error else {"output": r.content},
                )
            )
            for r in done.results
        ]
        contents.append(types.Content(role="user", parts=parts))
    return contents


_UNNAMED = "gemini-call-"  # Gemini may send a call without an id: matched by name and order


def _tool_turn(content: Any) -> str | None:
    """A model turn that calls functions, as the text a TOOL_USE completion carries."""
    parts = content.parts if content is not None and content.parts else []
    found = [p.function_call for p in parts if p.function_call is not None]
    if not found:
        return None
    calls = [
        ToolCall(f.id or f"{_UNNAMED}{i}", f.name or "", json.dumps(f.args or {}, sort_keys=True))
        for i, f in enumerate(found)
    ]
    return encode_tool_turn(content.model_dump(mode="json", exclude_none=True), calls)


def read_response(response: Any) -> Hop:
    """One response → Hop; raises Outcome (prompt blocked) or a malformed-body error."""
    usage = usage_of(response.usage_metadata)
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        reason = getattr(feedback.block_reason, "value", feedback.block_reason)
        detail = f"prompt blocked: {reason} {feedback.block_reason_message or ''}".strip()
        raise Outcome(StopReason.REFUSAL, detail, usage)
    if usage is None and not response.candidates:  # JSON, but not the vendor's reply
        raise not_a_reply(NAME, "neither usage_metadata nor candidates")
    if usage is None:
        raise malformed(NAME, "no usage_metadata, so the call cannot be priced")
    if not response.candidates:
        raise malformed(NAME, "no candidates", usage)
    candidate = response.candidates[0]
    finish = candidate.finish_reason
    if finish in _INCOMPLETE:
        raise malformed(NAME, "no finish reason", usage)
    turn = _tool_turn(candidate.content) if finish is _F.STOP else None
    if turn is not None:
        tier = _SERVED.get(getattr(response.usage_metadata, "service_tier", None))
        return Hop(usage, turn, StopReason.TOOL_USE, "", None, response.model_version, tier)
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    # Thought parts are the model's reasoning (billed, see usage_of); the reply excludes them.
    text = "".join(p.text for p in parts if p.text and not p.thought)
    token = candidate.continuation_token if finish is _F.CONTINUATION else None
    stop, detail = _stop(finish, candidate.finish_message)
    tier = _SERVED.get(getattr(response.usage_metadata, "service_tier", None))
    return Hop(usage, text, stop, detail, token or None, response.model_version, tier)


def usage_of(meta: Any) -> Usage | None:
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
