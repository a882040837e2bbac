"""Gemini Batch API: many generateContent requests, answered later at the batch price.

Entries are built by the interactive adapter's own builders (`_gemini_wire`) and read back
by its translator. Small batches go inline; above the inline limit the requests go up as a
JSONL file (the Files API's resumable upload) and the results come back as a JSONL file.
The batch's display_name carries the caller's name (the run id), so `find` can re-attach.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import structlog
from google.genai import errors as genai_errors
from google.genai import types

from harness.llm import (
    BatchEntry,
    BatchHandle,
    BatchItem,
    BatchLimits,
    BatchState,
    BatchStatus,
    CallRequest,
    Completion,
    EntryOutcome,
    ProviderError,
    ServiceTier,
)
from harness.providers.batching import one_model
from harness.providers.errors import describe, malformed, read_key, redact, transport_error
from harness.providers.gemini import GeminiProvider
from harness.providers.gemini_wire import (
    NAME,
    Outcome,
    build_config,
    build_contents,
    read_response,
)

__all__ = ["INLINE_LIMIT", "LIMITS", "GeminiBatches"]

# Inline requests suit batches whose "total request size stays under 20 MB"; larger ones go
# as a JSONL input file (ai.google.dev/gemini-api/docs/batch-api). A file may be up to 2 GB
# (Files API). Google publishes no request-count limit; 100,000 keeps one split rule for both
# vendors (an assumption, not a documented figure).
INLINE_LIMIT = 20 * 1000 * 1000
LIMITS = BatchLimits(max_requests=100_000, max_bytes=2 * 1000 * 1000 * 1000)
log = structlog.get_logger()
_KEY = re.compile(r"[^\s]{1,256}")
_S = types.JobState
_STATE = {
    _S.JOB_STATE_SUCCEEDED: BatchState.ENDED,
    _S.JOB_STATE_PARTIALLY_SUCCEEDED: BatchState.ENDED,
    _S.JOB_STATE_FAILED: BatchState.ENDED,
    _S.JOB_STATE_CANCELLED: BatchState.ENDED,
    _S.JOB_STATE_EXPIRED: BatchState.ENDED,
    _S.JOB_STATE_CANCELLING: BatchState.CANCELING,
}
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError)


class GeminiBatches:
    """The Gemini Developer API's batches through `google-genai`, SDK retries off.

    `inline_limit` (bytes of request JSON) is where a batch switches to a JSONL file; tests
    lower it. The base URL is never passed: the SDK reads GOOGLE_GEMINI_BASE_URL.
    """

    name = NAME
    limits = LIMITS

    def __init__(
        self,
        api_key: str,
        *,
        timeout_s: float,
        key_source: str = "api_key",
        inline_limit: int = INLINE_LIMIT,
    ) -> None:
        # The interactive adapter classifies errors (key refused, no funds, 5xx) the same.
        self._calls = GeminiProvider(api_key, timeout_s=timeout_s, key_source=key_source)
        self._key = api_key  # kept only to scrub it from any error text
        self._client = self._calls.client
        self._inline_limit = inline_limit

    @classmethod
    def from_env(cls, *, timeout_s: float) -> GeminiBatches:
        """Read GEMINI_API_KEY, else GOOGLE_API_KEY; MissingKeyError naming both when unset."""
        key, source = read_key("GEMINI_API_KEY", "GOOGLE_API_KEY", provider=NAME)
        return cls(key, timeout_s=timeout_s, key_source=source)

    def submit(self, items: Sequence[BatchItem], *, display_name: str) -> BatchHandle:
        """Create one batch (inline, or from an uploaded JSONL file above the inline limit)."""
        model = one_model(items, NAME, self.limits, _KEY)
        lines = [
            json.dumps({"key": i.custom_id, "request": wire_request(i.request)}) for i in items
        ]
        size = sum(len(line.encode()) + 1 for line in lines)
        if size > self.limits.max_bytes:
            raise ValueError(
                f"batch of {len(items)} requests is {size} bytes, over Gemini's "
                f"{self.limits.max_bytes}: split it into smaller batches"
            )
        config = types.CreateBatchJobConfig(display_name=display_name)
        with self._guard(model):
            if size <= self._inline_limit:
                src: Any = types.BatchJobSource(inlined_requests=[_inlined(i) for i in items])
            else:
                src = self._upload("\n".join(lines) + "\n", display_name)
            job = self._client.batches.create(model=model, src=src, config=config)
            return _handle(job, model)

    def status(self, handle: BatchHandle) -> BatchStatus:
        """Where the batch is. Counts are read from inline results once it has ended (a
        file's results are counted by reading them: see `results`)."""
        with self._guard(handle.model):
            job = self._client.batches.get(name=handle.id)
            state = _STATE.get(job.state, BatchState.RUNNING)
            if job.state is _S.JOB_STATE_FAILED:  # the whole batch failed: nothing will be billed
                error = redact(job.error.message or "", self._key) if job.error else ""
                log.warning("batch_failed", provider=NAME, batch_id=handle.id, error=error[:200])
            if state is not BatchState.ENDED or job.dest is None or not job.dest.inlined_responses:
                return BatchStatus(state)
            errored = sum(1 for r in job.dest.inlined_responses if r.error is not None)
            return BatchStatus(state, len(job.dest.inlined_responses) - errored, errored)

    def results(self, handle: BatchHandle) -> Iterator[BatchEntry]:
        """The entries the vendor reports for an ended batch, in its order (match by
        custom_id). Entries that never ran (a canceled or expired batch) are not reported:
        the caller treats a custom_id with no entry as not run and not billed."""
        with self._guard(handle.model):
            dest = self._client.batches.get(name=handle.id).dest
            for key, response, error in self._lines(dest):
                yield self._entry(key, response, error, handle.model)

    def _lines(self, dest: Any) -> Iterator[tuple[str, Any, Any]]:
        """(custom_id, response, error) per reported entry, inline or from the results file."""
        if dest is not None and dest.inlined_responses:
            for inline in dest.inlined_responses:
                error = inline.error.model_dump(exclude_none=True) if inline.error else None
                yield (inline.metadata or {}).get("key", ""), inline.response, error
        elif dest is not None and dest.file_name:
            data = self._client.files.download(file=dest.file_name)
            for raw in data.decode("utf-8").splitlines():
                line = json.loads(raw) if raw.strip() else None
                if line is None:
                    continue
                response = line.get("response")
                if response is not None:  # the SDK's own reader: unknown fields are dropped
                    response = types.GenerateContentResponse._from_response(
                        response=response, kwargs={}
                    )
                yield line["key"], response, line.get("error")

    def cancel(self, handle: BatchHandle) -> None:
        with self._guard(handle.model):
            self._client.batches.cancel(name=handle.id)

    def find(self, display_name: str) -> list[BatchHandle]:
        """Every batch whose display_name is `display_name` (a run's batches, by run id)."""
        with self._guard(""):
            jobs = list(self._client.batches.list(config=types.ListBatchJobsConfig(page_size=100)))
            return [_handle(j, "") for j in jobs if j.display_name == display_name]

    def _upload(self, jsonl: str, display_name: str) -> str:
        upload = types.UploadFileConfig(mime_type="application/jsonl", display_name=display_name)
        file = self._client.files.upload(file=io.BytesIO(jsonl.encode()), config=upload)
        if not file.name:
            raise malformed(NAME, "the uploaded file has no name")
        return file.name

    def _entry(self, key: str, response: Any, error: Any, model: str) -> BatchEntry:
        if error is not None or response is None:
            text = _error_text(error)
            return BatchEntry(key, EntryOutcome.ERRORED, error=redact(text, self._key))
        try:
            hop = read_response(response)
        except Outcome as outcome:  # blocked: billed, but no reply to ship
            text, usage, stop, detail, served = (
                "",
                outcome.usage,
                outcome.stop,
                outcome.detail,
                model,
            )
        except ProviderError as exc:  # an unusable body: reported, never shipped
            return BatchEntry(key, EntryOutcome.ERRORED, error=exc.message)
        else:
            text, usage, stop, detail, served = hop.text, hop.usage, hop.stop, hop.detail, hop.model
        done = Completion(
            text, usage, stop, served or model, NAME, detail=detail, service_tier=ServiceTier.BATCH
        )
        return BatchEntry(key, EntryOutcome.SUCCEEDED, done)

    @contextlib.contextmanager
    def _guard(self, model: str) -> Iterator[None]:
        """SDK and transport exceptions → a classified ProviderError."""
        try:
            yield
        except ProviderError:
            raise
        except genai_errors.APIError as exc:
            message = redact(exc.message or str(exc), self._key)
            raise self._calls.classify(exc, message, model) from exc
        except Exception as exc:  # raw httpx2 errors, JSON errors, odd bodies
            error = transport_error(exc, NAME)
            if error is None and not isinstance(exc, _MALFORMED):
                raise
            raise error or malformed(NAME, describe(exc)) from exc


def wire_request(request: CallRequest) -> dict[str, Any]:
    """The GenerateContentRequest one JSONL line carries: the same fields, in the same
    camelCase wire form, as the SDK sends for an inline entry built by `_inlined`."""
    prompt, body = request.prompt, {}
    parts = [{"text": t} for t in (prompt.stable, prompt.variable) if t]
    body["contents"] = [{"parts": parts, "role": "user"}]
    build_contents(request)  # the same refusal of an empty prompt as the inline path
    if prompt.system:
        body["systemInstruction"] = {"parts": [{"text": prompt.system}], "role": "user"}
    body["generationConfig"] = {"candidateCount": 1, "maxOutputTokens": request.route.max_tokens}
    return body


def _inlined(item: BatchItem) -> types.InlinedRequest:
    return types.InlinedRequest(
        contents=build_contents(item.request),
        config=build_config(item.request),
        metadata={"key": item.custom_id},
    )


def _handle(job: Any, model: str) -> BatchHandle:
    created = job.create_time.timestamp() if job.create_time else 0.0
    model = model or (job.model or "").removeprefix("models/")
    return BatchHandle(job.name or "", NAME, model, job.display_name or "", created)


def _error_text(error: Any) -> str:
    if not isinstance(error, dict):
        return "no response and no error reported"
    # A google.rpc.Status: a gRPC code number (3 = INVALID_ARGUMENT) and a message.
    code = error.get("status") or (f"code {error['code']}" if "code" in error else "")
    return f"{code}: {error.get('message', '')}".strip(": ")
