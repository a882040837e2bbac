"""Batch mode: attempt 1's writes go to the vendors' batch APIs at the start of the night.

`start` reserves every write at the batch price and re-attaches to, or submits and records,
the batches; `poll` (its own thread) polls with backoff, cancels at the deadline, settles
each entry that succeeded at the batch price and records it as this run's call for that
prompt, so the task's write call reuses it (Caller: a reply this run already received).
A task whose entry did not succeed runs its write interactively, at the list price. Each
task is handed to the pool (`arrivals`) once its entry is settled, never before.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import structlog

from harness.budget import Budget
from harness.calls.caller import CallLog, charge
from harness.llm import (
    BatchEntry,
    BatchHandle,
    BatchProvider,
    BatchState,
    CallRequest,
    Completion,
    EntryOutcome,
    Usage,
)
from harness.pricing import PriceTable, cost
from harness.runner.batch.plan import Pending, custom_id, mark_settled, reserve, submit_groups
from harness.store import BatchEntryRow, BatchLog, RecordedBatch

__all__ = ["BatchNight", "BatchTiming"]

log = structlog.get_logger()


@dataclass(frozen=True)
class BatchTiming:
    """When the batch must have ended (unix seconds), and how often to ask."""

    deadline: float
    poll_s: float
    max_poll_s: float


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

    def batchable(self, request: CallRequest) -> bool:
        return request.route.provider in self._vendors

    def start(self, requests: Sequence[CallRequest]) -> set[str]:
        """Submit (or re-attach to) the batches for these writes; the task ids that wait."""
        recorded = self._batch_log.batches()
        known = {e.task_id: (b, e) for b in recorded for e in b.entries}
        late = self._clock() >= self._timing.deadline  # a resume after it: nothing new goes
        fresh: list[Pending] = []
        for request in requests:
            if (reply := self._calls.recorded(request)) is not None:
                mark_settled(self._batch_log, self._prices, request, reply, known)
                continue  # the write call reuses it
            if request.task_id in known:
                self._reattach(request, *known[request.task_id])
            elif late:
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

    def _reattach(self, request: CallRequest, batch: RecordedBatch, row: BatchEntryRow) -> None:
        """An entry a crashed process submitted: wait for it again, holding its worst case."""
        if row.outcome is not None:
            return  # its outcome is known: the task runs (its reply, if any, is recorded)
        if row.prompt_sha256 != request.prompt.sha256:  # its inputs changed since: a reply
            log.warning("batch_entry_stale", batch_id=batch.handle.id, task_id=row.task_id)
            return  # to the old prompt must not answer the new one; it writes interactively
        entry = reserve(request, self._prices, self._budget)
        if entry is None:  # it is out at the vendor all the same: watch it, unreserved
            price = self._prices.get(request.route.model)
            entry = Pending(request, custom_id(request.task_id), price, None, Decimal(0))
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
        interval = self._timing.poll_s
        try:
            while self._watches and not self._stop.is_set():
                if self._clock() >= self._timing.deadline and self._cancel_all():
                    interval = self._timing.poll_s  # canceling is quick: look again soon
                for watch in list(self._watches.values()):
                    self._poll_one(watch)
                if not self._watches:
                    return
                to_deadline = self._timing.deadline - self._clock()
                self._stop.wait(min(interval, to_deadline) if to_deadline > 0 else interval)
                interval = min(interval * 2, self._timing.max_poll_s)
        except Exception as exc:  # a harness fault: the tasks still run, interactively
            log.error("batch_poll_crashed", error=repr(exc))
            raise
        finally:  # stopping or faulted: every waiting task is handed over
            for watch in self._watches.values():
                for entry in watch.entries.values():
                    self._release(entry.request.task_id)

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
