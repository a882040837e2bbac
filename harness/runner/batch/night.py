"""Batch mode: attempt 1's writes go to the vendors' batch APIs at the start of the night.

`start` reserves every write at the batch price and re-attaches to, or submits and records,
the batches (the functions at the end of this module); `poll` (its own thread) polls with
backoff, cancels at the deadline, settles each entry that succeeded at the batch price and
records it as this run's call for that prompt, so the task's write call reuses it (Caller: a
reply this run already received). A task whose entry did not succeed runs its write
interactively, at the list price. Each task is handed to the pool (`arrivals`) once its entry
is settled, never before.

The same pieces run one step at a time where something else keeps the time (a Temporal night,
harness/scale/batchsteps.py): `start` in one process; later, in a process per poll, `attach`
(re-attach only, never submit), `poll_once`, then `let_go`; `BatchTiming.after` is the backoff
for both.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

import structlog

from harness.budget import Budget, Reservation, estimate_worst_case
from harness.calls import CallLog, charge, log_call
from harness.llm import (
    BatchEntry,
    BatchHandle,
    BatchItem,
    BatchLimits,
    BatchProvider,
    BatchState,
    CallRequest,
    Completion,
    EntryOutcome,
    ProviderError,
    RecordedReply,
    ServiceTier,
    Usage,
)
from harness.pricing import Price, PriceError, PriceTable, cost
from harness.store import BatchEntryRow, BatchLog, RecordedBatch

__all__ = ["BatchNight", "BatchTiming", "entry_id"]

log = structlog.get_logger()


@dataclass(frozen=True)
class BatchTiming:
    """When the batch must have ended (unix seconds), and how often to ask."""

    deadline: float
    poll_s: float
    max_poll_s: float

    def after(self, interval: float, now: float) -> tuple[float, float]:
        """(how long to wait before the next poll, the interval after that): the interval cut
        short at the deadline, then doubled up to max_poll_s."""
        to_deadline = self.deadline - now
        wait = min(interval, to_deadline) if to_deadline > 0 else interval
        return wait, min(interval * 2, self.max_poll_s)


@dataclass
class _Watch:
    handle: BatchHandle
    entries: dict[str, Pending] = field(default_factory=dict)  # custom_id → entry
    canceled: bool = False


class BatchNight:
    """One night's batch phase (see the module docstring)."""

    def __init__(
        self,
        vendors: Mapping[str, BatchProvider],
        timing: BatchTiming,
        *,
        budget: Budget,
        prices: PriceTable,
        calls: CallLog,
        batch_log: BatchLog,
        run_id: str,
        stop: threading.Event,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._vendors = dict(vendors)
        self._timing = timing
        self._budget, self._prices, self._calls = budget, prices, calls
        self._batch_log, self._run_id, self._stop, self._clock = batch_log, run_id, stop, clock
        self._watches: dict[str, _Watch] = {}
        self._arrived: queue.Queue[str] = queue.Queue()
        self._waiting: set[str] = set()
        self._lock = threading.Lock()

    def fresh(self) -> BatchNight:
        """A new phase on the same vendors, store, budget and deadline (one per round)."""
        return BatchNight(
            self._vendors,
            self._timing,
            budget=self._budget,
            prices=self._prices,
            calls=self._calls,
            batch_log=self._batch_log,
            run_id=self._run_id,
            stop=self._stop,
            clock=self._clock,
        )

    def batchable(self, request: CallRequest) -> bool:
        return request.route.provider in self._vendors

    @property
    def timing(self) -> BatchTiming:
        return self._timing

    def start(self, requests: Sequence[CallRequest]) -> set[str]:
        """Submit (or re-attach to) the batches for these writes; the task ids that wait."""
        recorded = self._batch_log.batches()
        late = self._clock() >= self._timing.deadline  # a resume after it: nothing new goes
        fresh: list[Pending] = []
        for request in self._attach(requests, recorded):
            if late:
                log.warning("batch_too_late", task_id=request.task_id)
            elif (entry := reserve(request, self._prices, self._budget)) is not None:
                fresh.append(entry)
        handles = submit_groups(
            fresh, self._vendors, self._batch_log, self._run_id, recorded, self._fell_back
        )
        by_batch = {h.id: h for h in handles}
        for entry in fresh:
            if entry.batch_id in by_batch:
                self._watch(by_batch[entry.batch_id], entry)
        return set(self._waiting)

    def attach(self, requests: Sequence[CallRequest]) -> set[str]:
        """Re-attach to the batches the store records for these writes, submitting nothing;
        the task ids that wait."""
        self._attach(requests, self._batch_log.batches())
        return set(self._waiting)

    def _attach(
        self, requests: Sequence[CallRequest], recorded: Sequence[RecordedBatch]
    ) -> list[CallRequest]:
        """Settle or re-attach every write the store knows of; the writes it knows nothing of."""
        known = {e.custom_id: (b, e) for b in recorded for e in b.entries}
        unknown = []
        for request in requests:
            if (reply := self._calls.recorded(request)) is not None:
                mark_settled(self._batch_log, self._prices, request, reply, known)  # reused
            elif entry_id(request) in known:
                self._reattach(request, *known[entry_id(request)])
            else:
                unknown.append(request)
        return unknown

    def _reattach(self, request: CallRequest, batch: RecordedBatch, row: BatchEntryRow) -> None:
        """An entry a crashed process submitted: wait for it again, holding its worst case."""
        if row.outcome is not None:
            return  # its outcome is known: the task runs (its reply, if any, is recorded)
        if row.prompt_sha256 != request.prompt.sha256:  # its inputs changed since: a reply
            log.warning("batch_entry_stale", batch_id=batch.handle.id, task_id=row.task_id)
            return  # to the old prompt must not answer the new one; it writes interactively
        entry = reserve(request, self._prices, self._budget)
        if entry is None:  # it is out at the vendor all the same: watch it, unreserved
            price = self._prices.get(request.route.model, request.route.pricing)
            entry = Pending(request, entry_id(request), price, None, Decimal(0))
        log.info("batch_reattached", batch_id=batch.handle.id, task_id=request.task_id)
        self._watch(batch.handle, entry, canceled=batch.canceled)

    def _watch(self, handle: BatchHandle, entry: Pending, canceled: bool = False) -> None:
        watch = self._watches.setdefault(handle.id, _Watch(handle, canceled=canceled))
        entry.batch_id = handle.id
        watch.entries[entry.custom_id] = entry
        self._waiting.add(entry.request.task_id)

    def arrivals(self) -> Iterator[str]:
        """Task ids as their entries settle, until no task waits."""
        while True:
            with self._lock:
                if not self._waiting:
                    return
            task_id = self._arrived.get()
            with self._lock:
                if task_id not in self._waiting:
                    continue  # handed over already
                self._waiting.discard(task_id)
            yield task_id

    def _release(self, task_id: str) -> None:
        self._arrived.put(task_id)

    def poll(self) -> None:
        """Poll every batch until each has ended (or the run stops), cancelling at the deadline."""
        log.info("batch_poll_thread", batches=len(self._watches))
        interval = self._timing.poll_s
        try:
            while self._watches and not self._stop.is_set():
                after = self.poll_once(interval)
                if after is None:
                    return
                wait, interval = self._timing.after(after, self._clock())
                self._stop.wait(wait)
        except Exception as exc:  # a harness fault: the tasks still run, interactively
            log.error("batch_poll_crashed", error=repr(exc))
            raise
        finally:  # stopping or faulted: every waiting task is handed over
            for watch in self._watches.values():
                for entry in watch.entries.values():
                    self._release(entry.request.task_id)

    def poll_once(self, interval: float) -> float | None:
        """One round: at the deadline cancel every batch, then ask the vendor once per batch and
        settle those that ended. The backoff's interval from here (back to poll_s after a
        cancel: canceling is quick, look again soon), or None when no batch is left."""
        if self._clock() >= self._timing.deadline and self._cancel_all():
            interval = self._timing.poll_s
        for watch in list(self._watches.values()):
            self._poll_one(watch)
        return interval if self._watches else None

    def let_go(self) -> None:
        """Release the holds of the entries still out: this process ends while they wait, and
        a hold outliving its process would be charged in full. The next step holds them again."""
        for watch in self._watches.values():
            for entry in watch.entries.values():
                if entry.reservation is not None:
                    self._budget.release(entry.reservation)
                    entry.reservation = None

    def _cancel_all(self) -> bool:
        """Cancel every batch not yet canceled; whether one was canceled now."""
        newly = False
        for watch in self._watches.values():
            if watch.canceled:
                continue
            try:
                self._vendors[watch.handle.provider].cancel(watch.handle)
            except Exception as exc:
                log.warning("batch_cancel_failed", batch_id=watch.handle.id, error=str(exc))
                continue
            watch.canceled = True
            self._batch_log.mark(watch.handle.id, canceled=True)
            log.warning("batch_deadline_cancel", batch_id=watch.handle.id)
            newly = True
        return newly

    def _poll_one(self, watch: _Watch) -> None:
        vendor = self._vendors[watch.handle.provider]
        try:
            status = vendor.status(watch.handle)
            if status.state is not BatchState.ENDED:
                return
            entries = list(vendor.results(watch.handle))
        except Exception as exc:
            log.warning("batch_poll_failed", batch_id=watch.handle.id, error=str(exc))
            return
        for entry in entries:
            pending = watch.entries.pop(entry.custom_id, None)
            if pending is not None:
                self._settle(watch.handle, pending, entry)
        for pending in watch.entries.values():  # the vendor said nothing of it
            missing = BatchEntry(pending.custom_id, EntryOutcome.ERRORED, error="no result")
            self._settle(watch.handle, pending, missing)
        self._batch_log.mark(watch.handle.id, ended_at=self._clock())
        log.info("batch_ended", batch_id=watch.handle.id, canceled=watch.canceled)
        del self._watches[watch.handle.id]

    def _settle(self, handle: BatchHandle, pending: Pending, entry: BatchEntry) -> None:
        """An entry's outcome into budget, calls and store; then its task may run."""
        try:
            self._record(handle, pending, entry)
        finally:
            self._release(pending.request.task_id)

    def _record(self, handle: BatchHandle, pending: Pending, entry: BatchEntry) -> None:
        latency = max(0.0, self._clock() - handle.created_at)
        row = BatchEntryRow(pending.custom_id, pending.request.task_id, "", entry.outcome)
        if entry.outcome is EntryOutcome.SUCCEEDED and entry.completion is not None:
            completion, amount, listed = self._charged(pending, entry.completion)
            held = pending.reservation or self._budget.try_reserve(row.task_id, Decimal(0))
            if held is not None:
                self._budget.settle(held, amount)
            call = self._calls.open_call(pending.request, pending.reserved)
            self._calls.close_call(call, completion, amount)
            # the call's canonical line, as an interactive call's (service_tier: batch)
            with structlog.contextvars.bound_contextvars(task_id=row.task_id):
                log_call(pending.request, completion, amount)
            row = BatchEntryRow(
                row.custom_id, row.task_id, "", entry.outcome, latency, listed, amount
            )
        else:
            if pending.reservation is not None:
                self._budget.release(pending.reservation)
            log.warning(
                "batch_entry_fell_back",
                task_id=row.task_id,
                outcome=entry.outcome.value,
                error=entry.error[:200],
            )
        self._batch_log.entry_done(handle.id, row)

    def _charged(
        self, pending: Pending, completion: Completion
    ) -> tuple[Completion, Decimal, Decimal]:
        """An entry's (completion to record, cost at the batch price, cost at list price).
        A usage report that cannot be true costs the reservation and is not recorded."""
        billed = charge(completion, pending.request.route, self._prices, pending.reserved)
        if not billed.problem:
            return completion, billed.amount, cost(completion.usage, pending.price)
        log.warning(
            "call_usage_implausible",
            task_id=pending.request.task_id,
            model=completion.model,
            problem=billed.problem,
            charged_usd=str(billed.amount),
        )
        return dataclasses.replace(completion, usage=Usage()), billed.amount, billed.amount

    def _fell_back(self, pending: Pending) -> None:
        """An entry no batch took (the submit failed): its task runs interactively now."""
        if pending.reservation is not None:
            self._budget.release(pending.reservation)
        self._release(pending.request.task_id)


# Reserving, submitting and re-attaching: the start of the batch phase.


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


def entry_id(request: CallRequest) -> str:
    """A request's entry id, unique in the run: attempt 1's write keeps the task id (the
    first-write phase's, as recorded by earlier versions); any other step adds step and
    attempt, since one task sends one request per round (harness/runner/batch/rounds.py)."""
    if request.step == "write" and request.attempt == 1:
        return custom_id(request.task_id)
    step = re.sub(r"[^A-Za-z0-9_-]", "_", request.step)
    return custom_id(f"{request.task_id}--{step}-{request.attempt}")


def reserve(request: CallRequest, prices: PriceTable, budget: Budget) -> Pending | None:
    """Hold the write's worst case at the batch price, or None (not batched: no batch price,
    or it does not fit, which stops nothing: the task runs interactively later)."""
    try:
        price = prices.get(request.route.model, request.route.pricing)
        batch = price.at(ServiceTier.BATCH)
    except PriceError as exc:
        log.warning("batch_not_priced", task_id=request.task_id, error=str(exc))
        return None
    worst = estimate_worst_case(request.prompt, request.route, batch)
    held = budget.try_reserve(request.task_id, worst)
    if held is None:
        log.warning("batch_entry_not_fitted", task_id=request.task_id, worst_usd=str(worst))
        return None
    return Pending(request, entry_id(request), price, held, worst)


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
    found = known.get(entry_id(request))
    if found is None or found[1].outcome is not None:
        return
    batch, row = found
    listed = cost(reply.completion.usage, prices.get(request.route.model, request.route.pricing))
    done = BatchEntryRow(row.custom_id, row.task_id, "", EntryOutcome.SUCCEEDED)
    batch_log.entry_done(batch.handle.id, replace(done, list_usd=listed, cost_usd=reply.cost_usd))
