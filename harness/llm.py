"""The LLM vocabulary every floor above speaks: prompt, route, request, usage, completion, error
kinds, the Provider protocol, and the batch protocol (many requests answered later)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Protocol, runtime_checkable

__all__ = [
    "AuthenticationError",
    "BatchEntry",
    "BatchHandle",
    "BatchItem",
    "BatchLimits",
    "BatchProvider",
    "BatchState",
    "BatchStatus",
    "CallKey",
    "CallRequest",
    "Completion",
    "EntryOutcome",
    "ErrorKind",
    "Prompt",
    "Provider",
    "ProviderError",
    "RecordedCall",
    "RecordedReply",
    "Route",
    "ServiceTier",
    "StopReason",
    "ToolCall",
    "ToolResult",
    "ToolRound",
    "ToolSpec",
    "Usage",
    "decode_tool_turn",
    "encode_tool_turn",
]


class ServiceTier(StrEnum):
    """How a vendor serves (and bills) a request: the list price, its batch API, or flex."""

    STANDARD = "standard"
    BATCH = "batch"  # Anthropic Message Batches, Gemini Batch API: asynchronous
    FLEX = "flex"  # Gemini `service_tier="flex"`: synchronous, slower, may be shed


@dataclass(frozen=True)
class Route:
    """Where one step's call goes: a tier resolved to provider, model and output cap.

    `service_tier` is what the route asks for; the Completion says what was served (a shed
    flex request falls back to standard), and that is what is priced. `prompt_cache`: whether
    the stable prefix is marked for the provider's cache (config `prompt_cache`).
    `priced_by`: the configured provider whose prices apply when another one answers (the
    simulator or a replay stands in for an endpoint that prices its own models).
    """

    tier: str
    provider: str
    model: str
    max_tokens: int
    service_tier: ServiceTier = ServiceTier.STANDARD
    prompt_cache: bool = True
    priced_by: str = ""

    @property
    def pricing(self) -> str:
        """The provider the price table is asked for this route's model."""
        return self.priced_by or self.provider


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt split where caching starts to differ.

    `stable` is identical across every attempt of one task (reference, tests, examples,
    capabilities) and is what providers cache; `variable` is the per-attempt part
    (current code, failing output) and always comes last.
    """

    system: str
    stable: str
    variable: str

    @property
    def text(self) -> str:
        """The user message as one string: stable prefix, then the per-attempt part."""
        return self.stable + self.variable

    @property
    def sha256(self) -> str:
        """Identifies this exact prompt (all three parts): what a replay matches calls on."""
        parts = json.dumps([self.system, self.stable, self.variable], ensure_ascii=False)
        return hashlib.sha256(parts.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CallRequest:
    """One paid request: what to send, where, and which task step it serves.

    `fallbacks` are cheaper routes on the same provider that the call takes instead, in
    order, when the budget cannot fit the route's worst case (an escalated fix stays on mid).
    """

    route: Route
    prompt: Prompt
    task_id: str
    step: str  # write | review | rewrite | fix
    attempt: int
    fallbacks: tuple[Route, ...] = ()
    # Context tools (off unless `loop.context_tools.enabled`): the tools offered, the rounds
    # of this step so far (each replayed to the vendor verbatim), and whether the model must
    # answer now (tool choice none). Empty, a request is exactly what it was without tools.
    tools: tuple[ToolSpec, ...] = ()
    rounds: tuple[ToolRound, ...] = ()
    tools_final: bool = False
    # An optional call (the judge's): a refused key or account fails this call, not the
    # night; the refusal is remembered, so no later optional call sends that key again.
    fails_open: bool = False


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: its name, what it does, and its JSON schema (as JSON
    text, so the tools array is the same bytes on every call of a task)."""

    name: str
    description: str
    schema_json: str


@dataclass(frozen=True)
class ToolCall:
    """One tool call a model asked for: the vendor's id, the tool, its arguments (JSON)."""

    id: str
    name: str
    arguments_json: str

    @property
    def arguments(self) -> dict[str, object]:
        value = json.loads(self.arguments_json)
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returned to the model; `is_error` carries a refusal and its reason."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolRound:
    """One earlier round of a step: the model's turn exactly as the vendor sent it (JSON),
    the calls it made, and their results, in order."""

    turn: str
    calls: tuple[ToolCall, ...]
    results: tuple[ToolResult, ...]


def encode_tool_turn(turn: object, calls: Sequence[ToolCall]) -> str:
    """A tool-using reply as text: the vendor's turn (JSON-able) and its calls. It is what a
    TOOL_USE completion carries, so the store and replay keep it like any reply."""
    listed = [[c.id, c.name, json.loads(c.arguments_json)] for c in calls]
    return json.dumps({"turn": turn, "calls": listed}, ensure_ascii=False, sort_keys=True)


def decode_tool_turn(text: str) -> tuple[str, tuple[ToolCall, ...]]:
    """(the turn as JSON text, its calls) from `encode_tool_turn`'s text; ValueError if not."""
    try:
        value = json.loads(text)
        turn = json.dumps(value["turn"], ensure_ascii=False, sort_keys=True)
        calls = tuple(
            ToolCall(str(i), str(n), json.dumps(a, ensure_ascii=False, sort_keys=True))
            for i, n, a in value["calls"]
        )
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"not a tool turn: {exc}") from exc
    return turn, calls


@dataclass(frozen=True)
class Usage:
    """Normalised token usage.

    input_tokens are *fresh* input only (billed at the input price); cache reads and
    writes are separate; output_tokens include any thinking tokens, which vendors bill
    as output. Each adapter documents its vendor's quirk where it translates.
    """

    input_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.output_tokens + other.output_tokens,
        )


class StopReason(StrEnum):
    """Why a reply ended. Anything but END is an outcome to record, never a file to ship."""

    END = "end"
    MAX_TOKENS = "max_tokens"
    REFUSAL = "refusal"
    CONTEXT_TOO_LONG = "context_too_long"
    ERROR = "error"  # a failed try, recorded with what the vendor billed before it failed
    # The model asked for context tools: the text is the turn (`encode_tool_turn`), no code.
    TOOL_USE = "tool_use"


@dataclass(frozen=True)
class Completion:
    """A provider's answer, already translated out of the vendor's types."""

    text: str
    usage: Usage
    stop_reason: StopReason
    model: str
    provider: str
    latency_s: float = 0.0
    retries: int = 0
    detail: str = ""  # vendor's own words for a non-END stop (finish reason, block reason)
    service_tier: ServiceTier = ServiceTier.STANDARD  # what the vendor served and bills


@dataclass(frozen=True)
class RecordedReply:
    """A reply this run already received and paid for, to the very same request (a resume
    reuses it): the completion, what it cost (settled and counted already), and its tier."""

    completion: Completion
    cost_usd: Decimal
    tier: str


class ErrorKind(StrEnum):
    """How the one retry policy treats a failure."""

    RATE_LIMIT = "rate_limit"
    TRANSIENT = "transient"
    FATAL = "fatal"
    AUTH = "auth"


@dataclass
class ProviderError(Exception):
    """A call that produced no completion, classified for the retry policy.

    `billed` is what the vendor had already charged for this request before it failed (a
    stream cut part-way, an earlier continuation hop): the caller settles it, never drops it.
    `outcome_unknown` says the request may have reached the vendor and been billed beyond
    `billed` (a timeout or a connection lost after it was sent, a cut stream, a garbled 200):
    the caller then charges the try's whole reservation, the most the vendor can bill for it.
    `transport` says no server answered at all (refused, unreachable, reset, timed out).
    """

    kind: ErrorKind
    message: str
    status: int | None = None
    retry_after_s: float | None = None
    provider: str = ""
    billed: Usage = Usage()
    outcome_unknown: bool = False
    transport: bool = False

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{self.provider or 'provider'} {self.kind.value}{status}: {self.message}"


class AuthenticationError(ProviderError):
    """Credentials were refused: every later call would fail the same way, so the run stops."""


@runtime_checkable
class Provider(Protocol):
    """Anything that turns a CallRequest into a Completion (or raises ProviderError).

    A provider subclasses this protocol, so it inherits the defaults below and states only
    where it differs: `requests_per_call`, the most requests one call may make (continuation
    hops: the paid-call layer reserves for every one); `billed`, whether a vendor bills the
    usage it reports (a replay asks no vendor: its zero usage is the truth, not a missing
    report, and its failures say nothing about the night's providers)."""

    name: str
    requests_per_call: int = 1
    billed: bool = True

    def complete(self, request: CallRequest) -> Completion: ...


@dataclass(frozen=True)
class CallKey:
    """What identifies one call of a night."""

    task_id: str
    step: str
    attempt: int
    prompt_sha256: str

    @classmethod
    def of(cls, request: CallRequest) -> CallKey:
        return cls(request.task_id, request.step, request.attempt, request.prompt.sha256)

    def __str__(self) -> str:
        return (
            f"task {self.task_id}, step {self.step}, attempt {self.attempt}, "
            f"prompt sha256 {self.prompt_sha256[:12]}"
        )


@dataclass(frozen=True)
class RecordedCall:
    """One call as a run recorded it: its prompt and what came back (the last try's)."""

    key: CallKey
    prompt: Prompt
    completion: Completion


# The batch protocol.
# Batch protocol: many requests to one provider and model, answered later at the batch price.
#
# A vendor batch (Anthropic Message Batches, the Gemini Batch API) is a unit the harness
# creates once, records, polls, maybe cancels, and reads results from. Every adapter speaks
# this protocol; the runner never sees vendor types. Entries are matched by `custom_id`, which
# the harness chooses (the task id and step), never by position: vendors return them in any order.


@dataclass(frozen=True)
class BatchItem:
    """One request of a batch. Every item of one batch has the same provider and model."""

    custom_id: str
    request: CallRequest


@dataclass(frozen=True)
class BatchHandle:
    """What identifies a created batch: recorded in the run store before any poll."""

    id: str
    provider: str
    model: str
    display_name: str  # carries the run id, so a batch created but not recorded can be found
    created_at: float = 0.0  # unix seconds, as the vendor reports it (0 when it does not)


class BatchState(StrEnum):
    """Where a batch is. ENDED covers finished, canceled and expired batches alike: results
    can be read, and each entry's outcome says what happened to it."""

    RUNNING = "running"
    CANCELING = "canceling"
    ENDED = "ended"


@dataclass(frozen=True)
class BatchStatus:
    state: BatchState
    succeeded: int = 0  # vendors report counts only once the batch has ended
    errored: int = 0
    canceled: int = 0
    expired: int = 0


class EntryOutcome(StrEnum):
    SUCCEEDED = "succeeded"
    ERRORED = "errored"
    CANCELED = "canceled"
    EXPIRED = "expired"


@dataclass(frozen=True)
class BatchEntry:
    """One entry's result. `completion` is set only when it SUCCEEDED; its service_tier is
    BATCH and its usage is what the vendor billed at the batch price."""

    custom_id: str
    outcome: EntryOutcome
    completion: Completion | None = None
    error: str = ""


@dataclass(frozen=True)
class BatchLimits:
    """Where a batch must be split: the vendor's request count and payload size limits."""

    max_requests: int
    max_bytes: int


@runtime_checkable
class BatchProvider(Protocol):
    """A vendor's batch API. Methods raise ProviderError (classified) on transport faults;
    the caller retries under the one retry policy."""

    name: str
    limits: BatchLimits

    def submit(self, items: Sequence[BatchItem], *, display_name: str) -> BatchHandle: ...

    def status(self, handle: BatchHandle) -> BatchStatus: ...

    def results(self, handle: BatchHandle) -> Iterator[BatchEntry]: ...

    def cancel(self, handle: BatchHandle) -> None: ...

    def find(self, display_name: str) -> list[BatchHandle]: ...
