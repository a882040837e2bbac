"""Batch protocol: many requests to one provider and model, answered later at the batch price.

A vendor batch (Anthropic Message Batches, the Gemini Batch API) is a unit the harness
creates once, records, polls, maybe cancels, and reads results from. Every adapter speaks
this protocol; the runner never sees vendor types. Entries are matched by `custom_id`, which
the harness chooses (the task id and step), never by position: vendors return them in any order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from harness.providers.base import CallRequest, Completion

__all__ = [
    "BatchEntry",
    "BatchHandle",
    "BatchItem",
    "BatchLimits",
    "BatchProvider",
    "BatchState",
    "BatchStatus",
    "EntryOutcome",
]


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
