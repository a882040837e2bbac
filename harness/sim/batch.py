"""Simulated batch API: a BatchProvider over the simulator's own completions.

Each entry's reply is what the interactive simulator gives for the same request, served at
the batch tier, so a batch night and an interactive one differ only in price and timing.
Scriptable for tests (`SimBatchScript`): the batch ends after N polls or never, entries can
error or expire, counts stay zero until it has ended. With `state` the provider side lives
in a JSON file, so a second process (a resume after kill -9) sees the batches the first made.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.fsio import write_atomic
from harness.llm import (
    BatchEntry,
    BatchHandle,
    BatchItem,
    BatchLimits,
    BatchState,
    BatchStatus,
    CallRequest,
    EntryOutcome,
    Prompt,
    Provider,
    Route,
    ServiceTier,
)

__all__ = ["SimBatch", "SimBatchScript"]


@dataclass(frozen=True)
class SimBatchScript:
    """How the simulated vendor behaves. `polls_to_end` None: never ends unless canceled.
    `ready_after` gives single entries their own poll count (done entries survive a cancel);
    `outcomes` makes single entries errored or expired. `ready_after_s` instead ends the batch
    once the vendor's clock is that many seconds past its submission (a Temporal night gives
    the clock the workflow's time, so a test can let simulated hours pass)."""

    polls_to_end: int | None = 1
    ready_after: Mapping[str, int] = field(default_factory=dict)
    outcomes: Mapping[str, EntryOutcome] = field(default_factory=dict)
    ready_after_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "polls_to_end": self.polls_to_end,
            "ready_after": dict(self.ready_after),
            "outcomes": {k: v.value for k, v in self.outcomes.items()},
            "ready_after_s": self.ready_after_s,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SimBatchScript:
        outcomes = {k: EntryOutcome(v) for k, v in (data.get("outcomes") or {}).items()}
        ready = dict(data.get("ready_after") or {})
        return cls(data.get("polls_to_end", 1), ready, outcomes, data.get("ready_after_s"))


def _request_json(request: CallRequest) -> dict[str, Any]:
    return dataclasses.asdict(request)


def _route(data: Mapping[str, Any]) -> Route:
    return Route(**{**data, "service_tier": ServiceTier(data["service_tier"])})


def _request_from(data: Mapping[str, Any]) -> CallRequest:
    route = _route(data["route"])
    fallbacks = tuple(_route(r) for r in data["fallbacks"])
    rest = {k: data[k] for k in ("task_id", "step", "attempt")}
    return CallRequest(route, Prompt(**data["prompt"]), fallbacks=fallbacks, **rest)


class SimBatch:
    """The simulator's batch API (see the module docstring)."""

    name = "sim"
    limits = BatchLimits(max_requests=100_000, max_bytes=256 * 2**20)

    def __init__(
        self,
        provider: Provider,
        script: SimBatchScript | None = None,
        *,
        state: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._provider = provider
        self._script = script
        self._state = state
        self._clock = clock
        self._lock = threading.Lock()
        self._batches: dict[str, dict[str, Any]] = {}
        self.creates = 0  # submit calls seen by this object (tests count them)

    def _load(self) -> dict[str, Any]:
        if self._state is None or not self._state.is_file():
            return {"script": None, "batches": self._batches}
        data = json.loads(self._state.read_text(encoding="utf-8"))
        data.setdefault("batches", {})
        return data

    def _save(self, data: dict[str, Any]) -> None:
        if self._state is not None:
            write_atomic(self._state, json.dumps(data, indent=1))

    def _scripted(self, data: Mapping[str, Any]) -> SimBatchScript:
        if self._script is not None:
            return self._script
        return SimBatchScript.from_json(data.get("script") or {})

    def submit(self, items: Sequence[BatchItem], *, display_name: str) -> BatchHandle:
        with self._lock:
            data = self._load()
            self.creates += 1
            first = items[0].request.route
            handle = BatchHandle(
                f"simbatch_{uuid.uuid4().hex[:12]}",
                first.provider,
                first.model,
                display_name,
                self._clock(),
            )
            data["batches"][handle.id] = {
                "handle": dataclasses.asdict(handle),
                "items": [
                    {"custom_id": i.custom_id, "request": _request_json(i.request)} for i in items
                ],
                "polls": 0,
                "canceled_at": None,
            }
            self._save(data)
            return handle

    def status(self, handle: BatchHandle) -> BatchStatus:
        with self._lock:
            data = self._load()
            batch = data["batches"][handle.id]
            batch["polls"] += 1
            self._save(data)
            return self._status(batch, self._scripted(data))

    def _done(self, batch: Mapping[str, Any], script: SimBatchScript, custom_id: str) -> bool:
        if script.ready_after_s is not None:  # by the clock: as it was when canceled, if so
            at = batch.get("canceled_clock")
            at = self._clock() if at is None else at
            return at >= batch["handle"]["created_at"] + script.ready_after_s
        polls = batch["polls"] if batch["canceled_at"] is None else batch["canceled_at"]
        need = script.ready_after.get(custom_id, script.polls_to_end)
        return need is not None and polls >= need

    def _ended(self, batch: Mapping[str, Any], script: SimBatchScript) -> bool:
        if batch["canceled_at"] is not None:
            return batch["polls"] > batch["canceled_at"] + 1  # one poll in CANCELING
        return all(self._done(batch, script, i["custom_id"]) for i in batch["items"])

    def _status(self, batch: Mapping[str, Any], script: SimBatchScript) -> BatchStatus:
        if not self._ended(batch, script):
            running = batch["canceled_at"] is None
            return BatchStatus(BatchState.RUNNING if running else BatchState.CANCELING)
        counts = {o: 0 for o in EntryOutcome}
        for item in batch["items"]:
            counts[self._outcome(batch, script, item["custom_id"])] += 1
        return BatchStatus(
            BatchState.ENDED,
            succeeded=counts[EntryOutcome.SUCCEEDED],
            errored=counts[EntryOutcome.ERRORED],
            canceled=counts[EntryOutcome.CANCELED],
            expired=counts[EntryOutcome.EXPIRED],
        )

    def _outcome(self, batch: Mapping[str, Any], script: SimBatchScript, cid: str) -> EntryOutcome:
        if not self._done(batch, script, cid):
            return EntryOutcome.CANCELED
        return script.outcomes.get(cid, EntryOutcome.SUCCEEDED)

    def results(self, handle: BatchHandle) -> Iterator[BatchEntry]:
        with self._lock:
            data = self._load()
            batch = data["batches"][handle.id]
            script = self._scripted(data)
            if not self._ended(batch, script):
                raise ValueError(f"batch {handle.id} has not ended: its results cannot be read")
            outcomes = [(i, self._outcome(batch, script, i["custom_id"])) for i in batch["items"]]
        for item, outcome in reversed(outcomes):  # vendors answer in any order
            yield self._entry(item, outcome)

    def _entry(self, item: Mapping[str, Any], outcome: EntryOutcome) -> BatchEntry:
        cid = item["custom_id"]
        if outcome is not EntryOutcome.SUCCEEDED:
            return BatchEntry(cid, outcome, error=f"simulated {outcome.value}")
        completion = self._provider.complete(_request_from(item["request"]))
        served = dataclasses.replace(completion, service_tier=ServiceTier.BATCH)
        return BatchEntry(cid, outcome, served)

    def cancel(self, handle: BatchHandle) -> None:
        with self._lock:
            data = self._load()
            batch = data["batches"][handle.id]
            if batch["canceled_at"] is None and not self._ended(batch, self._scripted(data)):
                batch["canceled_at"] = batch["polls"]
                batch["canceled_clock"] = self._clock()
            self._save(data)

    def find(self, display_name: str) -> list[BatchHandle]:
        with self._lock:
            data = self._load()
        return [
            BatchHandle(**b["handle"])
            for b in data["batches"].values()
            if b["handle"]["display_name"] == display_name
        ]
