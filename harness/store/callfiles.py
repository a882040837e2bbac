"""Each call's files in the run folder: the prompt, the reply, and the record that lets a
replay serve the reply again (calls/<task>/<attempt>-<step>.{prompt.md,reply.md,call.json})."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.llm import CallKey, CallRequest, Completion, Prompt, RecordedCall, StopReason, Usage

__all__ = ["RecordingError", "call_record", "prompt_file", "read_call", "read_calls"]

_SYSTEM, _STABLE, _VARIABLE = "<!-- system -->\n", "\n<!-- stable -->\n", "<!-- variable -->\n"


class RecordingError(ValueError):
    """A run folder's call records cannot be read back (missing, older harness, edited)."""


def prompt_file(prompt: Prompt) -> str:
    """The prompt as a person reads it: its three parts under marker lines."""
    return f"{_SYSTEM}{prompt.system}{_STABLE}{prompt.stable}{_VARIABLE}{prompt.variable}"


def call_record(request: CallRequest, completion: Completion, cost_usd: Decimal) -> str:
    """The call.json beside the prompt and reply: the key, where each prompt part ends (so
    the prompt file splits back exactly), and everything of the completion but its text."""
    prompt, usage = request.prompt, completion.usage
    record = {
        "task_id": request.task_id,
        "step": request.step,
        "attempt": request.attempt,
        "prompt_sha256": prompt.sha256,
        "system_chars": len(prompt.system),
        "stable_chars": len(prompt.stable),
        "tier": request.route.tier,
        "provider": completion.provider,
        "model": completion.model,
        "stop_reason": completion.stop_reason.value,
        "detail": completion.detail,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "output_tokens": usage.output_tokens,
        },
        "cost_usd": str(cost_usd),
        "retries": completion.retries,
    }
    return json.dumps(record, indent=1) + "\n"


def _split(text: str, record: dict[str, Any], path: Path) -> Prompt:
    system_end = len(_SYSTEM) + record["system_chars"]
    stable_start = system_end + len(_STABLE)
    stable_end = stable_start + record["stable_chars"]
    prompt = Prompt(
        text[len(_SYSTEM) : system_end],
        text[stable_start:stable_end],
        text[stable_end + len(_VARIABLE) :],
    )
    if prompt.sha256 != record["prompt_sha256"] or prompt_file(prompt) != text:
        raise RecordingError(f"{path}: the prompt file does not match its call.json (edited?)")
    return prompt


def _read(path: Path) -> RecordedCall:
    stem = path.name.removesuffix(".call.json")
    record = json.loads(path.read_text(encoding="utf-8"))
    text = (path.parent / f"{stem}.prompt.md").read_text(encoding="utf-8")
    reply = (path.parent / f"{stem}.reply.md").read_text(encoding="utf-8")
    key = CallKey(record["task_id"], record["step"], record["attempt"], record["prompt_sha256"])
    completion = Completion(
        reply,
        Usage(**record["usage"]),
        StopReason(record["stop_reason"]),
        record["model"],
        record["provider"],
        retries=record["retries"],
        detail=record["detail"],
    )
    return RecordedCall(key, _split(text, record, path), completion)


def read_call(root: Path, task_id: str, attempt: int, step: str) -> RecordedCall | None:
    """One recorded call, or None when the run made (or recorded) no such call."""
    path = Path(root) / "calls" / task_id / f"{attempt}-{step}.call.json"
    if not path.is_file():
        return None
    try:
        return _read(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RecordingError(f"{path}: cannot be read back: {exc}") from exc


def read_calls(root: Path) -> list[RecordedCall]:
    """Every call a run folder recorded; RecordingError when there are none or one is bad."""
    paths = sorted(Path(root).glob("calls/*/*.call.json"))
    if not paths:
        raise RecordingError(
            f"{root} has no call records (calls/<task>/*.call.json): it made no call, or was "
            "recorded by a harness older than replay"
        )
    calls = []
    for path in paths:
        try:
            calls.append(_read(path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RecordingError(f"{path}: cannot be replayed: {exc}") from exc
    return calls
