"""The batch half of the fake LLM server: Anthropic Message Batches, the Gemini Batch API and
OpenAI's Batch API (under /openai/v1/: a JSONL file uploaded to Files, a batch over it, the
output and error files read back).

Stateful where the rest of the fake is a script: a created batch lives here, ends after the
number of polls its BatchScript says (or never), can be canceled, and serves its results in
the vendor's wire format (Anthropic: JSONL from an absolute `results_url`, lines out of
order; Gemini: an operation with `BATCH_STATE_*`, inline responses or a JSONL results file).
Gemini's resumable file upload is served too, at an upload URL that points back here.
What an entry bills is recorded in `billed` (tokens, charged at the batch price).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import threading
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["BatchScript", "EntryScript", "FakeBatches"]

# Tokens one entry bills: (fresh input, cache write, cache read, output).
Bill = tuple[int, int, int, int]


@dataclass(frozen=True)
class EntryScript:
    """One entry's fate. `outcome`: succeeded | errored | canceled | expired."""

    outcome: str = "succeeded"
    text: str = "def handle(): ..."
    bill: Bill = (100, 0, 0, 50)
    error: str = "invalid request: max_tokens too large"
    done_before_cancel: bool = False  # a cancel leaves it as scripted instead of canceled


@dataclass
class BatchScript:
    """How the next created batch behaves: it ends after `polls` status reads (None: never
    on its own); `entries` by custom_id (others: `default`); `state` the Gemini end state."""

    polls: int | None = 1
    entries: dict[str, EntryScript] = field(default_factory=dict)
    default: EntryScript = EntryScript()
    gemini_state: str = "BATCH_STATE_SUCCEEDED"
    results_file: bool | None = None  # Gemini: force (or forbid) a responses file


@dataclass
class _Batch:
    id: str
    vendor: str
    model: str
    display_name: str
    ids: list[str]
    requests: list[Any]
    script: BatchScript
    polls: int = 0
    canceling: bool = False
    ended: bool = False
    from_file: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    created: dt.datetime = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def outcome(self, custom_id: str) -> EntryScript:
        if self.vendor == "gemini" and self.script.gemini_state == "BATCH_STATE_FAILED":
            return EntryScript("errored", bill=(0, 0, 0, 0))  # the whole batch failed
        entry = self.script.entries.get(custom_id, self.script.default)
        if self.canceling and not entry.done_before_cancel:
            return EntryScript("canceled", bill=(0, 0, 0, 0))
        return entry


class FakeBatches:
    """Answers the batch endpoints of both vendors; `answer` returns None for other paths."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.creates: Counter[str] = Counter()  # vendor -> batches created
        self.billed: list[tuple[str, Bill]] = []  # (custom_id, tokens) at the batch price
        self.uploads: dict[str, bytes] = {}  # Gemini file name -> content
        self.batches: dict[str, _Batch] = {}
        self._scripts: deque[BatchScript] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[str, bytearray] = {}
        self._failures: deque[Any] = deque()
        self._t0 = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(hours=1)

    def fail(self, *replies: Any) -> FakeBatches:
        """Answer the next batch requests with these (error) Replies instead."""
        with self._lock:
            self._failures.extend(replies)
        return self

    def script(self, *scripts: BatchScript) -> FakeBatches:
        with self._lock:
            self._scripts.extend(scripts)
        return self

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes):
        """The reply to a batch request, or None when `path` is not a batch endpoint."""
        from tests.fakeserver import json_reply

        parts = urlsplit(path)
        route, query = parts.path, parse_qs(parts.query)
        with self._lock:
            if self._failures and self._is_batch(route):
                return self._failures.popleft()
            found = self._route(method, route, query, headers, body)
        if found is None:
            return None
        status, payload, extra = found
        if isinstance(payload, bytes):
            from tests.fakeserver import Reply

            return Reply(status, payload, extra, content_type="application/binary")
        return json_reply(payload, status=status, headers=extra)

    # --- routing -----------------------------------------------------------------------

    @staticmethod
    def _is_batch(route: str) -> bool:
        batchy = ("/v1/messages/batches", "/fake-", "/upload/", "/v1beta/batches", "/v1/batches")
        batchy += ("/openai/v1/files", "/openai/v1/batches")
        return route.startswith(batchy) or route.endswith((":batchGenerateContent", ":download"))

    def _route(self, method, route, query, headers, body):
        if route.startswith(("/openai/v1/files", "/openai/v1/batches")):
            return self._openai(method, route.removeprefix("/openai/v1/"), headers, body)
        if route.startswith("/v1/messages/batches") or route.startswith("/fake-results/"):
            return self._anthropic(method, route, query, body)
        if route.startswith("/upload/") or route.startswith("/fake-upload/"):
            return self._upload(route, headers, body)
        for version in ("/v1beta/", "/v1/"):
            if route.startswith(version):
                return self._gemini(method, route[len(version) :], query, body)
        return None

    def _new(self, vendor: str, model: str, name: str, ids: list[str], reqs: list[Any]) -> _Batch:
        script = self._scripts.popleft() if self._scripts else BatchScript()
        number = next(self._ids)
        prefix = {"anthropic": "msgbatch_fake", "openai": "batch_fake"}.get(vendor, "batches/fake")
        batch = _Batch(f"{prefix}{number:04d}", vendor, model, name, ids, reqs, script)
        batch.created = self._t0 + dt.timedelta(minutes=number)
        self.batches[batch.id] = batch
        self.creates[vendor] += 1
        return batch

    def _poll(self, batch: _Batch) -> None:
        """One status read: the batch ends once it has been read `polls` times (or, when
        canceled, at the next read); entries are billed when it ends."""
        if batch.ended:
            return
        batch.polls += 1
        limit = batch.script.polls
        if batch.canceling or (limit is not None and batch.polls >= limit):
            batch.ended = True
            for custom_id in batch.ids:
                entry = batch.outcome(custom_id)
                if entry.outcome == "succeeded":
                    self.billed.append((custom_id, entry.bill))

    # --- Anthropic ---------------------------------------------------------------------

    def _anthropic(self, method, route, query, body):
        if route.startswith("/fake-results/"):
            batch = self.batches.get(route.removeprefix("/fake-results/").removesuffix(".jsonl"))
            if batch is None or not batch.ended:
                return 404, _anthropic_error("not_found_error", "no results"), {}
            return 200, _anthropic_results(batch), {}
        rest = route.removeprefix("/v1/messages/batches").strip("/")
        if method == "POST" and not rest:
            requests = json.loads(body)["requests"]
            ids = [r["custom_id"] for r in requests]
            if len(set(ids)) != len(ids):
                return 400, _anthropic_error("invalid_request_error", "duplicate custom_id"), {}
            model = requests[0]["params"]["model"] if requests else ""
            batch = self._new("anthropic", model, "", ids, requests)
            return 200, self._anthropic_batch(batch), {}
        if method == "GET" and not rest:
            data = [self._anthropic_batch(b) for b in self.batches.values()]
            data = [b for b in reversed(data) if b["id"].startswith("msgbatch_")]
            first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
            return 200, {"data": data, "has_more": False, "first_id": first, "last_id": last}, {}
        batch_id, _, action = rest.partition("/")
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, _anthropic_error("not_found_error", f"no batch {batch_id}"), {}
        if method == "POST" and action == "cancel":
            batch.canceling = not batch.ended or batch.canceling
            return 200, self._anthropic_batch(batch), {}
        if method == "GET" and not action:
            self._poll(batch)
            return 200, self._anthropic_batch(batch), {}
        if method == "GET" and action == "results" and batch.ended:
            return 200, _anthropic_results(batch), {}
        return None

    def _anthropic_batch(self, batch: _Batch) -> dict[str, Any]:
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if batch.ended:  # counts are zero until the whole batch has ended
            for custom_id in batch.ids:
                counts[batch.outcome(custom_id).outcome] += 1
        else:
            counts["processing"] = len(batch.ids)
        status = "ended" if batch.ended else "canceling" if batch.canceling else "in_progress"
        iso = batch.created.isoformat().replace("+00:00", "Z")
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "created_at": iso,
            "expires_at": (batch.created + dt.timedelta(hours=24)).isoformat(),
            "ended_at": iso if batch.ended else None,
            "cancel_initiated_at": iso if batch.canceling else None,
            "archived_at": None,
            "results_url": f"{self.base_url}/fake-results/{batch.id}.jsonl"
            if batch.ended
            else None,
        }

    # --- Gemini ------------------------------------------------------------------------

    def _gemini(self, method, route, query, body):
        if method == "POST" and route.endswith(":batchGenerateContent"):
            model = route.removeprefix("models/").removesuffix(":batchGenerateContent")
            spec = json.loads(body)["batch"]
            source = spec["inputConfig"]
            if "fileName" in source:
                lines = self.uploads[source["fileName"]].decode().splitlines()
                pairs = [(json.loads(line)["key"], json.loads(line)["request"]) for line in lines]
            else:
                items = source["requests"]["requests"]
                pairs = [(item["metadata"]["key"], item["request"]) for item in items]
            batch = self._new(
                "gemini", model, spec.get("displayName", ""), [k for k, _ in pairs], pairs
            )
            batch.from_file = "fileName" in source
            return 200, self._gemini_operation(batch), {}
        if method == "GET" and route == "batches":
            ops = [self._gemini_operation(b) for b in self.batches.values() if b.vendor == "gemini"]
            return 200, {"operations": ops}, {}
        if route.startswith("files/") and route.endswith(":download"):
            name = route.removesuffix(":download")
            batch = next((b for b in self.batches.values() if _out_file(b) == name), None)
            if batch is None or not batch.ended:
                return 404, _gemini_error(404, "NOT_FOUND", f"no file {name}"), {}
            return 200, _gemini_results_file(batch), {}
        if route.startswith("batches/"):
            name, _, action = route.partition(":")
            batch = self.batches.get(name)
            if batch is None:
                return 404, _gemini_error(404, "NOT_FOUND", f"no batch {name}"), {}
            if method == "POST" and action == "cancel":
                batch.canceling = not batch.ended or batch.canceling
                return 200, {}, {}
            if method == "GET" and not action:
                self._poll(batch)
                return 200, self._gemini_operation(batch), {}
        return None

    def _gemini_operation(self, batch: _Batch) -> dict[str, Any]:
        state = "BATCH_STATE_RUNNING" if batch.polls else "BATCH_STATE_PENDING"
        if batch.ended:
            state = "BATCH_STATE_CANCELLED" if batch.canceling else batch.script.gemini_state
        meta: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": f"models/{batch.model}",
            "displayName": batch.display_name,
            "createTime": batch.created.isoformat().replace("+00:00", "Z"),
            "state": state,
            "name": batch.id,
        }
        operation: dict[str, Any] = {"name": batch.id, "metadata": meta}
        failed = batch.script.gemini_state == "BATCH_STATE_FAILED" and not batch.canceling
        if batch.ended and not failed:
            if _as_file(batch):
                meta["output"] = {"responsesFile": _out_file(batch)}
            else:
                meta["output"] = {"inlinedResponses": {"inlinedResponses": _gemini_inline(batch)}}
        if batch.ended:
            operation["done"] = True
        return operation

    def _upload(self, route, headers, body):
        """Resumable upload: `start` returns an upload URL back at this server; `upload,
        finalize` chunks are appended and the last one returns the File."""
        command = headers.get("x-goog-upload-command", "")
        if route.startswith("/upload/") and "start" in command:
            number = next(self._ids)
            url = f"{self.base_url}/fake-upload/{number}"
            self._pending[str(number)] = bytearray()
            return 200, {}, {"x-goog-upload-url": url, "x-goog-upload-status": "active"}
        key = route.removeprefix("/fake-upload/")
        if key not in self._pending:
            return 404, _gemini_error(404, "NOT_FOUND", "no upload session"), {}
        self._pending[key] += body
        if "finalize" not in command:
            return 200, {}, {"x-goog-upload-status": "active"}
        name = f"files/upload{key}"
        self.uploads[name] = bytes(self._pending.pop(key))
        size = str(len(self.uploads[name]))
        file = {"name": name, "mimeType": "application/jsonl", "sizeBytes": size, "state": "ACTIVE"}
        return 200, {"file": file}, {"x-goog-upload-status": "final"}

    # --- OpenAI ------------------------------------------------------------------------

    def _openai(self, method, route, headers, body):
        kind, _, rest = route.partition("/")
        if kind == "files" and method == "POST":
            name = f"file-fake{next(self._ids):04d}"
            self.uploads[name] = _multipart_file(headers, body)
            return 200, _openai_file(name, len(self.uploads[name])), {}
        if kind == "files":
            file_id = rest.removesuffix("/content")
            content = self.uploads.get(file_id) or self._openai_results(file_id)
            if content is None:
                return (
                    404,
                    {"error": {"message": f"no file {file_id}", "type": "invalid_request_error"}},
                    {},
                )
            return 200, content, {}
        if method == "POST" and not rest:
            fields = json.loads(body)
            lines = self.uploads[fields["input_file_id"]].decode().splitlines()
            requests = [json.loads(line) for line in lines if line.strip()]
            ids = [r["custom_id"] for r in requests]
            model = requests[0]["body"]["model"] if requests else ""
            name = (fields.get("metadata") or {}).get("display_name", "")
            batch = self._new("openai", model, name, ids, requests)
            batch.metadata = fields.get("metadata") or {}
            return 200, _openai_batch(batch), {}
        if method == "GET" and not rest:
            data = [
                _openai_batch(b) for b in reversed(self.batches.values()) if b.vendor == "openai"
            ]
            return 200, {"object": "list", "data": data, "has_more": False}, {}
        batch_id, _, action = rest.partition("/")
        batch = self.batches.get(batch_id)
        if batch is None:
            return (
                404,
                {"error": {"message": f"no batch {batch_id}", "type": "invalid_request_error"}},
                {},
            )
        if method == "POST" and action == "cancel":
            batch.canceling = not batch.ended or batch.canceling
            return 200, _openai_batch(batch), {}
        if method == "GET" and not action:
            self._poll(batch)
            return 200, _openai_batch(batch), {}
        return None

    def _openai_results(self, file_id: str) -> bytes | None:
        """A batch's output (`...-out`) or error (`...-err`) file, once it has ended."""
        batch_id, _, which = file_id.rpartition("-")
        batch = self.batches.get(batch_id)
        if batch is None or not batch.ended:
            return None
        return _openai_results(batch, errors=which == "err")


# --- wire formats --------------------------------------------------------------------------


def _anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _anthropic_results(batch: _Batch) -> bytes:
    lines = []
    for custom_id in reversed(batch.ids):  # never in request order: match by custom_id
        entry = batch.outcome(custom_id)
        result: dict[str, Any] = {"type": entry.outcome}
        if entry.outcome == "succeeded":
            fresh, write, read, out = entry.bill
            result["message"] = {
                "id": f"msg_{custom_id}",
                "type": "message",
                "role": "assistant",
                "model": batch.model,
                "content": [{"type": "text", "text": entry.text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": fresh,
                    "cache_creation_input_tokens": write,
                    "cache_read_input_tokens": read,
                    "output_tokens": out,
                    "service_tier": "batch",
                },
            }
        elif entry.outcome == "errored":
            result["error"] = _anthropic_error("invalid_request_error", entry.error)
        lines.append(json.dumps({"custom_id": custom_id, "result": result}))
    return ("\n".join(lines) + "\n").encode()


def _gemini_error(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


def _gemini_response(batch: _Batch, entry: EntryScript) -> dict[str, Any]:
    fresh, _, read, out = entry.bill
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": entry.text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": fresh + read,
            "cachedContentTokenCount": read,
            "candidatesTokenCount": out,
            "totalTokenCount": fresh + read + out,
        },
        "modelVersion": batch.model,
    }


def _gemini_entries(batch: _Batch) -> list[tuple[str, dict[str, Any]]]:
    """(key, line body) for every entry that ran; canceled/expired ones are absent."""
    found = []
    for custom_id in reversed(batch.ids):
        entry = batch.outcome(custom_id)
        if entry.outcome == "succeeded":
            found.append((custom_id, {"response": _gemini_response(batch, entry)}))
        elif entry.outcome == "errored":  # a google.rpc.Status: gRPC code 3, INVALID_ARGUMENT
            found.append((custom_id, {"error": {"code": 3, "message": entry.error}}))
    return found


def _gemini_inline(batch: _Batch) -> list[dict[str, Any]]:
    return [{**line, "metadata": {"key": key}} for key, line in _gemini_entries(batch)]


def _gemini_results_file(batch: _Batch) -> bytes:
    lines = [json.dumps({"key": key, **line}) for key, line in _gemini_entries(batch)]
    return ("\n".join(lines) + "\n").encode()


def _as_file(batch: _Batch) -> bool:
    forced = batch.script.results_file
    return batch.from_file if forced is None else forced


def _out_file(batch: _Batch) -> str:
    return f"files/results-{batch.id.removeprefix('batches/')}"


def _multipart_file(headers: dict[str, str], body: bytes) -> bytes:
    """The `file` part of a multipart/form-data upload."""
    import email.parser

    head = f"content-type: {headers.get('content-type', '')}\r\n\r\n".encode()
    message = email.parser.BytesParser().parsebytes(head + body)
    for part in message.get_payload():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True)
    raise ValueError("no file part in the upload")


def _openai_file(name: str, size: int) -> dict[str, Any]:
    return {
        "id": name,
        "object": "file",
        "bytes": size,
        "created_at": 1767225600,
        "filename": f"{name}.jsonl",
        "purpose": "batch",
        "status": "processed",
    }


def _openai_batch(batch: _Batch) -> dict[str, Any]:
    """A Batch object: `in_progress` until it has ended, then completed or cancelled."""
    status = "in_progress"
    if batch.canceling and not batch.ended:
        status = "cancelling"
    elif batch.ended:
        status = "cancelled" if batch.canceling else "completed"
    outcomes = [batch.outcome(i).outcome for i in batch.ids] if batch.ended else []
    counts = {
        "total": len(batch.ids),
        "completed": outcomes.count("succeeded"),
        "failed": outcomes.count("errored"),
    }
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "input_file_id": "file-in",
        "completion_window": "24h",
        "status": status,
        "created_at": int(batch.created.timestamp()),
        "output_file_id": f"{batch.id}-out" if batch.ended else None,
        "error_file_id": f"{batch.id}-err" if batch.ended else None,
        "request_counts": counts,
        "metadata": batch.metadata,
    }


def _openai_results(batch: _Batch, *, errors: bool) -> bytes:
    """The output file (succeeded entries) or the error file (the rest), out of order."""
    lines = []
    for custom_id in reversed(batch.ids):
        entry = batch.outcome(custom_id)
        if (entry.outcome == "succeeded") == errors:
            continue
        line: dict[str, Any] = {"id": f"batch_req_{custom_id}", "custom_id": custom_id}
        if entry.outcome == "succeeded":
            fresh, _, read, out = entry.bill
            usage = {
                "prompt_tokens": fresh + read,
                "completion_tokens": out,
                "total_tokens": fresh + read + out,
                "prompt_tokens_details": {"cached_tokens": read},
            }
            body = {
                "id": f"chatcmpl-{custom_id}",
                "object": "chat.completion",
                "created": 1767225600,
                "model": batch.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": entry.text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
            line["response"] = {"status_code": 200, "request_id": "req", "body": body}
            line["error"] = None
        elif entry.outcome == "errored":
            error = {"message": entry.error, "type": "invalid_request_error"}
            line["response"] = {"status_code": 400, "request_id": "req", "body": {"error": error}}
            line["error"] = None
        else:
            code = "batch_cancelled" if entry.outcome == "canceled" else "batch_expired"
            line["response"] = None
            line["error"] = {"code": code, "message": f"This request was {entry.outcome}."}
        lines.append(json.dumps(line))
    return ("\n".join(lines) + "\n").encode() if lines else b""
