"""Batch mode's start: reserve each write at the batch price, then re-attach to the batches
this run already made or submit new ones, recording each before anything polls it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

import structlog

from harness.budget import Budget, Reservation, estimate_worst_case
from harness.llm import (
    BatchHandle,
    BatchItem,
    BatchLimits,
    BatchProvider,
    CallRequest,
    EntryOutcome,
    ProviderError,
    RecordedReply,
    ServiceTier,
)
from harness.pricing import Price, PriceError, PriceTable, cost
from harness.store import BatchEntryRow, BatchLog, RecordedBatch

__all__ = ["Pending", "custom_id", "mark_settled", "parts", "reserve", "submit_groups"]

log = structlog.get_logger()


@dataclass
class Pending:
    """A write submitted (or to be) in a batch, and what it holds in the budget."""

    request: CallRequest
    custom_id: str
    price: Price  # the model's list price; the batch price is price.at(BATCH)
    reservation: Reservation | None
    reserved: Decimal
    batch_id: str = ""


def custom_id(task_id: str) -> str:
    """The entry's id: the task id when the vendors' 64-character pattern allows it."""
    if len(task_id) <= 64:
        return task_id
    return f"{task_id[:47]}-{hashlib.sha256(task_id.encode()).hexdigest()[:16]}"


def reserve(request: CallRequest, prices: PriceTable, budget: Budget) -> Pending | None:
    """Hold the write's worst case at the batch price, or None (not batched: no batch price,
    or it does not fit, which stops nothing: the task runs interactively later)."""
    try:
        price = prices.get(request.route.model)
        batch = price.at(ServiceTier.BATCH)
    except PriceError as exc:
        log.warning("batch_not_priced", task_id=request.task_id, error=str(exc))
        return None
    worst = estimate_worst_case(request.prompt, request.route, batch)
    held = budget.try_reserve(request.task_id, worst)
    if held is None:
        log.warning("batch_entry_not_fitted", task_id=request.task_id, worst_usd=str(worst))
        return None
    return Pending(request, custom_id(request.task_id), price, held, worst)


def _size(pending: Pending) -> int:
    prompt = pending.request.prompt
    return len(json.dumps([prompt.system, prompt.text]).encode()) + 512  # framing, generous


def parts(entries: Sequence[Pending], limits: BatchLimits) -> list[list[Pending]]:
    """Split one provider+model's entries at the vendor's request-count and size limits."""
    out: list[list[Pending]] = [[]]
    size = 0
    for entry in entries:
        grown = size + _size(entry)
        if out[-1] and (len(out[-1]) >= limits.max_requests or grown > limits.max_bytes):
            out.append([])
            grown = _size(entry)
        out[-1].append(entry)
        size = grown
    return [p for p in out if p]


def _record(batch_log: BatchLog, handle: BatchHandle, part: Sequence[Pending]) -> None:
    rows = [BatchEntryRow(p.custom_id, p.request.task_id, p.request.prompt.sha256) for p in part]
    batch_log.record(handle, rows)
    for p in part:
        p.batch_id = handle.id


def _create(vendor: BatchProvider, part: Sequence[Pending], name: str) -> BatchHandle | None:
    """The batch named `name`: one made before a crash, else a new one (never two)."""
    found = vendor.find(name)
    if found:
        log.info("batch_found", batch_id=found[0].id, display_name=name)
        return found[0]
    items = [BatchItem(p.custom_id, p.request) for p in part]
    try:
        return vendor.submit(items, display_name=name)
    except ProviderError as exc:  # it may have been created all the same: look once more
        found = vendor.find(name)
        if found:
            return found[0]
        log.error("batch_submit_failed", display_name=name, error=str(exc))
        return None


def submit_groups(
    entries: Iterable[Pending],
    vendors: dict[str, BatchProvider],
    batch_log: BatchLog,
    run_id: str,
    recorded: Sequence[RecordedBatch],
    failed: Callable[[Pending], None],
) -> list[BatchHandle]:
    """One batch per provider+model (more past the vendor's limits), each recorded with its
    custom_ids before anything polls it. Names are numbered after the run's recorded
    batches, so a resume asks `find` for the very name a crashed create would have used."""
    groups: dict[tuple[str, str], list[Pending]] = {}
    for entry in entries:
        route = entry.request.route
        groups.setdefault((route.provider, route.model), []).append(entry)
    number = len(recorded)
    handles = []
    for (provider, model), group in groups.items():
        vendor = vendors[provider]
        for part in parts(group, vendor.limits):
            number += 1
            name = f"harness {run_id} {provider}/{model} #{number}"
            handle = _create(vendor, part, name)
            if handle is None:
                for entry in part:
                    failed(entry)
                continue
            _record(batch_log, handle, part)
            log.info("batch_submitted", batch_id=handle.id, display_name=name, entries=len(part))
            handles.append(handle)
    return handles


def mark_settled(
    batch_log: BatchLog,
    prices: PriceTable,
    request: CallRequest,
    reply: RecordedReply,
    known: Mapping[str, tuple[RecordedBatch, BatchEntryRow]],
) -> None:
    """A reply recorded before a crash whose entry was not yet marked: mark it succeeded."""
    found = known.get(request.task_id)
    if found is None or found[1].outcome is not None:
        return
    batch, row = found
    listed = cost(reply.completion.usage, prices.get(request.route.model))
    done = BatchEntryRow(row.custom_id, row.task_id, "", EntryOutcome.SUCCEEDED)
    batch_log.entry_done(batch.handle.id, replace(done, list_usd=listed, cost_usd=reply.cost_usd))
