"""Anthropic Message Batches: many Messages requests, answered later at the batch price.

Each entry's params come from the interactive adapter's own builder (`message_params`), so
the stable prefix carries the same cache breakpoint and caches inside the batch too; each
result is translated by the interactive translator, so usage means the same thing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import anthropic
import httpx2

from harness.llm import (
    BatchEntry,
    BatchHandle,
    BatchItem,
    BatchLimits,
    BatchState,
    BatchStatus,
    EntryOutcome,
    ErrorKind,
    ProviderError,
    ServiceTier,
)
from harness.providers.anthropic import AnthropicProvider, message_params, translate_message
from harness.providers.batching import one_model
from harness.providers.errors import describe, malformed, read_key, redact, transport_error

__all__ = ["LIMITS", "AnthropicBatches"]

NAME = "anthropic"
# "A Message Batch is limited to either 100,000 Message requests or 256 MB in size, whichever
# is reached first" (platform.claude.com/docs/en/build-with-claude/batch-processing).
LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 1024 * 1024)
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # the API's own rule for custom_id
_STATE = {
    "in_progress": BatchState.RUNNING,
    "canceling": BatchState.CANCELING,
    "ended": BatchState.ENDED,
}
_OUTCOME = {o.value: o for o in EntryOutcome}
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError)


class AnthropicBatches:
    """Message Batches through the `anthropic` SDK, SDK retries off (the caller retries).

    The base URL is never passed: the SDK reads ANTHROPIC_BASE_URL itself (gateways).
    """

    name = NAME
    limits = LIMITS

    def __init__(self, api_key: str, *, timeout_s: float, key_source: str = "api_key") -> None:
        # The interactive adapter classifies errors (key refused, spend limit, 5xx) the same.
        self._calls = AnthropicProvider(api_key, timeout_s=timeout_s, key_source=key_source)
        self._key = api_key  # kept only to scrub it from any error text
        self._client = self._calls.client

    @classmethod
    def from_env(cls, *, timeout_s: float) -> AnthropicBatches:
        """Read ANTHROPIC_API_KEY; MissingKeyError (naming it) when it is not set."""
        key, source = read_key("ANTHROPIC_API_KEY", provider=NAME)
        return cls(key, timeout_s=timeout_s, key_source=source)

    def submit(self, items: Sequence[BatchItem], *, display_name: str) -> BatchHandle:
        """Create one batch of `items` (one model, within LIMITS). Anthropic keeps no name
        for a batch: `display_name` is carried on the handle only (see `find`)."""
        model = one_model(items, NAME, self.limits, _CUSTOM_ID)
        requests = [{"custom_id": i.custom_id, "params": message_params(i.request)} for i in items]
        size = len(json.dumps({"requests": requests}).encode())
        if size > self.limits.max_bytes:
            raise ValueError(
                f"batch of {len(items)} requests is {size} bytes, over Anthropic's "
                f"{self.limits.max_bytes}: split it into smaller batches"
            )
        with self._guard(model):
            batch = self._client.messages.batches.create(requests=requests)
            return BatchHandle(batch.id, NAME, model, display_name, batch.created_at.timestamp())

    def status(self, handle: BatchHandle) -> BatchStatus:
        """Where the batch is; the counts are zero until it has ended (the API's rule)."""
        with self._guard(handle.model):
            batch = self._client.messages.batches.retrieve(handle.id)
            counts = batch.request_counts
            return BatchStatus(
                _STATE.get(batch.processing_status, BatchState.RUNNING),
                counts.succeeded,
                counts.errored,
                counts.canceled,
                counts.expired,
            )

    def results(self, handle: BatchHandle) -> Iterator[BatchEntry]:
        """Every entry of an ended batch, in the vendor's order (match by custom_id)."""
        with self._guard(handle.model):
            lines = self._client.messages.batches.results(handle.id)
            try:
                for line in lines:
                    yield self._entry(line, handle.model)
            finally:
                lines.close()

    def cancel(self, handle: BatchHandle) -> None:
        """Ask the vendor to stop; the batch goes through `canceling` to `ended`, and entries
        that had not run come back `canceled` (billed nothing)."""
        with self._guard(handle.model):
            self._client.messages.batches.cancel(handle.id)

    def find(self, display_name: str) -> list[BatchHandle]:
        """Always empty: Anthropic stores no name or metadata for a batch, and its listing
        shows only ids, times and counts, so no listed batch can be proven to be this one.

        Returning a guess would be worse than nothing: a caller that re-attaches to what
        `find` returns would take another night's results for its own prompts. So a batch
        created but not recorded before a crash is not found again (its entries are bought
        twice, at the batch price; the Anthropic console lists them for an operator to inspect).
        """
        return []

    def _entry(self, line: Any, model: str) -> BatchEntry:
        result = line.result
        outcome = _OUTCOME.get(result.type)
        if outcome is None:
            raise malformed(NAME, f"unknown result type for entry {line.custom_id!r}")
        if outcome is EntryOutcome.SUCCEEDED:
            completion = translate_message(result.message, model, time.monotonic())
            completion = dataclasses.replace(
                completion, latency_s=0.0, service_tier=ServiceTier.BATCH
            )
            return BatchEntry(line.custom_id, outcome, completion)
        error = ""
        if outcome is EntryOutcome.ERRORED:
            inner = result.error.error
            error = redact(f"{inner.type}: {inner.message}", self._key)
        return BatchEntry(line.custom_id, outcome, error=error)

    @contextlib.contextmanager
    def _guard(self, model: str) -> Iterator[None]:
        """SDK and transport exceptions → a classified ProviderError."""
        try:
            yield
        except ProviderError:
            raise
        except anthropic.APIStatusError as exc:
            raise self._calls.classify(exc, model) from exc
        except anthropic.APIConnectionError as exc:  # includes APITimeoutError
            cause = exc.__cause__ or exc
            raise transport_error(cause, NAME) or ProviderError(
                ErrorKind.TRANSIENT,
                f"connection failed ({type(exc).__name__})",
                provider=NAME,
                outcome_unknown=True,
            ) from exc
        except httpx2.HTTPError as exc:  # read while streaming the results file
            raise transport_error(exc, NAME) or malformed(NAME, type(exc).__name__) from exc
        except anthropic.AnthropicError as exc:  # e.g. results asked for before the end
            text = redact(str(exc), self._key)
            raise ProviderError(ErrorKind.FATAL, text, provider=NAME) from exc
        except _MALFORMED as exc:
            raise malformed(NAME, describe(exc)) from exc
