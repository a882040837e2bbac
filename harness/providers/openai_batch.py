"""OpenAI Batch API: many Chat Completions requests, answered within a day at half price.

The requests go up as one JSONL file (Files API, purpose `batch`); each line's body is built
by the interactive adapter's own builder (`chat_params`, so the prefix and its cache key are
the same), and each result is read back by its translator, so usage means the same thing.
The batch's metadata carries the caller's name (the run id), so `find` can re-attach.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import httpx2
import openai
import structlog
from openai.types.chat import ChatCompletion

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
from harness.providers.batching import one_model
from harness.providers.endpoint import Endpoint
from harness.providers.errors import describe, malformed, redact, transport_error
from harness.providers.openai import (
    OpenAIProvider,
    chat_params,
    endpoint_key,
    reply_of,
    translate,
)

__all__ = ["LIMITS", "OpenAIBatches"]

# "A single batch may include up to 50,000 requests, and a batch input file can be up to
# 200 MB in size" (platform.openai.com/docs/guides/batch).
LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * 1024 * 1024)
log = structlog.get_logger()
_URL = "/v1/chat/completions"
_CUSTOM_ID = re.compile(r"[^\s]{1,256}")
_STATE = {
    "cancelling": BatchState.CANCELING,
    "completed": BatchState.ENDED,
    "failed": BatchState.ENDED,
    "expired": BatchState.ENDED,
    "cancelled": BatchState.ENDED,
}
# How the error file names an entry that never ran.
_NOT_RUN = {"batch_expired": EntryOutcome.EXPIRED, "batch_cancelled": EntryOutcome.CANCELED}
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError)


class OpenAIBatches:
    """OpenAI's batches through the `openai` SDK, SDK retries off (the caller retries)."""

    limits = LIMITS

    def __init__(
        self, endpoint: Endpoint, api_key: str, *, timeout_s: float, key_source: str
    ) -> None:
        # The interactive adapter classifies errors (key refused, no quota, 5xx) the same.
        self._calls = OpenAIProvider(endpoint, api_key, timeout_s=timeout_s, key_source=key_source)
        self.name = endpoint.name
        self._key = api_key  # kept only to scrub it from any error text
        self._client = self._calls.client

    @classmethod
    def from_endpoint(cls, endpoint: Endpoint, *, timeout_s: float) -> OpenAIBatches:
        """Keyed like the interactive adapter (MissingKeyError naming the variable)."""
        key, source = endpoint_key(endpoint)
        return cls(endpoint, key, timeout_s=timeout_s, key_source=source)

    def submit(self, items: Sequence[BatchItem], *, display_name: str) -> BatchHandle:
        """Upload the requests as one JSONL file and create a batch over it."""
        model = one_model(items, self.name, self.limits, _CUSTOM_ID)
        lines = [
            json.dumps(
                {
                    "custom_id": i.custom_id,
                    "method": "POST",
                    "url": _URL,
                    "body": chat_params(i.request, builtin=True),
                }
            )
            for i in items
        ]
        data = ("\n".join(lines) + "\n").encode()
        if len(data) > self.limits.max_bytes:
            raise ValueError(
                f"batch of {len(items)} requests is {len(data)} bytes, over OpenAI's "
                f"{self.limits.max_bytes}: split it into smaller batches"
            )
        with self._guard(model):
            upload = self._client.files.create(
                file=(f"{display_name}.jsonl", data, "application/jsonl"), purpose="batch"
            )
            batch = self._client.batches.create(
                input_file_id=upload.id,
                endpoint=_URL,
                completion_window="24h",
                metadata={"display_name": display_name, "model": model},
            )
            return _handle(batch, self.name, model)

    def status(self, handle: BatchHandle) -> BatchStatus:
        """Where the batch is; entries that never ran count as canceled or expired."""
        with self._guard(handle.model):
            batch = self._client.batches.retrieve(handle.id)
            state = _STATE.get(batch.status, BatchState.RUNNING)
            if batch.status == "failed":  # the input file was refused: nothing ran, nothing billed
                errors = batch.errors.data if batch.errors and batch.errors.data else []
                text = redact("; ".join(f"{e.code}: {e.message}" for e in errors[:3]), self._key)
                log.warning(
                    "batch_failed", provider=self.name, batch_id=handle.id, error=text[:200]
                )
            counts = batch.request_counts
            if state is not BatchState.ENDED or counts is None:
                return BatchStatus(state)
            unrun = max(0, counts.total - counts.completed - counts.failed)
            return BatchStatus(
                state,
                counts.completed,
                counts.failed,
                unrun if batch.status == "cancelled" else 0,
                unrun if batch.status == "expired" else 0,
            )

    def results(self, handle: BatchHandle) -> Iterator[BatchEntry]:
        """Every reported entry of an ended batch (output file, then error file), in the
        vendor's order (match by custom_id)."""
        with self._guard(handle.model):
            batch = self._client.batches.retrieve(handle.id)
            for file_id in (batch.output_file_id, batch.error_file_id):
                if not file_id:
                    continue
                text = self._client.files.content(file_id).text
                for raw in text.splitlines():
                    if raw.strip():
                        yield self._entry(json.loads(raw), handle.model)

    def cancel(self, handle: BatchHandle) -> None:
        """Ask the vendor to stop; the batch goes through `cancelling` to `cancelled`."""
        with self._guard(handle.model):
            self._client.batches.cancel(handle.id)

    def find(self, display_name: str) -> list[BatchHandle]:
        """Every batch whose metadata names `display_name` (a run's batches, by run id)."""
        with self._guard(""):
            batches = list(self._client.batches.list(limit=100))
            return [
                _handle(b, self.name, "")
                for b in batches
                if (b.metadata or {}).get("display_name") == display_name
            ]

    def _entry(self, line: dict[str, Any], model: str) -> BatchEntry:
        custom_id = str(line.get("custom_id", ""))
        response, error = line.get("response") or {}, line.get("error")
        if isinstance(error, dict) and error.get("code") in _NOT_RUN:
            return BatchEntry(custom_id, _NOT_RUN[error["code"]])
        body = response.get("body")
        if error or response.get("status_code") != 200 or not isinstance(body, dict):
            found = error or (body.get("error") if isinstance(body, dict) else None) or {}
            text = f"{found.get('code') or response.get('status_code')}: {found.get('message', '')}"
            return BatchEntry(custom_id, EntryOutcome.ERRORED, error=redact(text, self._key))
        try:
            completion = translate(reply_of(ChatCompletion.model_validate(body)), model, self.name)
        except (ProviderError, *_MALFORMED) as exc:  # an unusable body: reported, never shipped
            return BatchEntry(custom_id, EntryOutcome.ERRORED, error=describe(exc))
        done = dataclasses.replace(completion, service_tier=ServiceTier.BATCH)
        return BatchEntry(custom_id, EntryOutcome.SUCCEEDED, done)

    @contextlib.contextmanager
    def _guard(self, model: str) -> Iterator[None]:
        """SDK and transport exceptions → a classified ProviderError."""
        try:
            yield
        except ProviderError:
            raise
        except openai.APIStatusError as exc:
            raise self._calls.classify(exc, model) from exc
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise self._calls.connection_error(exc) from exc
        except httpx2.HTTPError as exc:
            raise transport_error(exc, self.name) or malformed(
                self.name, type(exc).__name__
            ) from exc
        except openai.OpenAIError as exc:
            text = redact(str(exc), self._key)
            raise ProviderError(ErrorKind.FATAL, text, provider=self.name) from exc
        except _MALFORMED as exc:
            raise malformed(self.name, describe(exc)) from exc


def _handle(batch: Any, provider: str, model: str) -> BatchHandle:
    metadata = batch.metadata or {}
    model = model or metadata.get("model", "")
    name = metadata.get("display_name", "")
    return BatchHandle(batch.id, provider, model, name, float(batch.created_at or 0))
