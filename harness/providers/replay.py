"""Replay provider: serves every call from a recorded run's replies; no network, $0.

A call is matched on its key (task, step, attempt and the sha256 of its exact prompt), so a
replay reproduces a night only while it asks exactly what that night asked; a call with no
recording fails the task with an error naming the key, never a made-up reply.

`loose` matching serves the reply recorded for the same task, step and attempt when only the
prompt differs, and logs it: failure text that is not steady across processes (a night
recorded before the sandbox pinned PYTHONHASHSEED, timings, a candidate's own randomness)
still makes another prompt.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from harness.llm import (
    CallKey,
    CallRequest,
    Completion,
    ErrorKind,
    Provider,
    ProviderError,
    RecordedCall,
    StopReason,
    Usage,
)

__all__ = ["ReplayProvider"]

log = structlog.get_logger()


class ReplayProvider(Provider):
    """A Provider answering from recorded calls: zero usage (so $0), zero latency."""

    name = "replay"
    billed = False  # no vendor is asked: its zero usage is the truth, not a missing report

    def __init__(self, calls: Iterable[RecordedCall], source: str, *, loose: bool = False) -> None:
        self._calls = {call.key: call for call in calls}
        self._by_attempt = {(k.task_id, k.step, k.attempt): c for k, c in self._calls.items()}
        self._source = source
        self._loose = loose

    def __len__(self) -> int:
        return len(self._calls)

    def complete(self, request: CallRequest) -> Completion:
        key = CallKey.of(request)
        found = self._calls.get(key) or self._loosely(key)
        if found is None:
            raise ProviderError(ErrorKind.FATAL, self._missing(key), provider=self.name)
        recorded = found.completion
        if recorded.stop_reason is StopReason.ERROR:
            message = f"recorded failure for {key}: {recorded.detail or 'no detail'}"
            raise ProviderError(ErrorKind.FATAL, message, provider=self.name)
        return Completion(
            recorded.text, Usage(), recorded.stop_reason, recorded.model, self.name,
            detail=recorded.detail,
        )  # fmt: skip

    def _loosely(self, key: CallKey) -> RecordedCall | None:
        found = self._by_attempt.get((key.task_id, key.step, key.attempt))
        if found is None or not self._loose:
            return None
        recorded = found.key.prompt_sha256[:12]
        log.warning("replay_prompt_differs", step=key.step, attempt=key.attempt,
                    asked=key.prompt_sha256[:12], recorded=recorded)  # fmt: skip
        return found

    def _missing(self, key: CallKey) -> str:
        why = (
            "that run asked this call with a different prompt (its inputs, templates or an "
            "earlier reply or test result differ; --replay-loose serves it anyway)"
            if (key.task_id, key.step, key.attempt) in self._by_attempt
            else "that run made no such call"
        )
        return f"no recorded reply for {key} in run {self._source}: {why}"
