"""The run store's batches: each batch with its entries, recorded before the first poll, and
each entry's outcome once it is known; what a resume re-attaches to and the summary reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from harness.llm import BatchHandle, EntryOutcome
from harness.store.db import Db

__all__ = ["BatchEntryRow", "BatchLog", "RecordedBatch"]


@dataclass(frozen=True)
class BatchEntryRow:
    """One recorded entry: whose write it carries and, once known, how it ended."""

    custom_id: str
    task_id: str
    prompt_sha256: str
    outcome: EntryOutcome | None = None
    latency_s: float | None = None
    list_usd: Decimal | None = None  # what the reply would have cost at the list price
    cost_usd: Decimal | None = None  # what it cost at the batch price


@dataclass(frozen=True)
class RecordedBatch:
    handle: BatchHandle
    entries: tuple[BatchEntryRow, ...]
    ended_at: float | None = None
    canceled: bool = False


def record_batch(
    db: Db, run_id: str, handle: BatchHandle, entries: Sequence[BatchEntryRow]
) -> None:
    """A created batch and every custom_id in it, in one transaction (before any poll)."""
    with db.tx() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO batches (run_id, batch_id, provider, model, display_name,"
            " created_at) VALUES (?,?,?,?,?,?)",
            (
                run_id,
                handle.id,
                handle.provider,
                handle.model,
                handle.display_name,
                handle.created_at,
            ),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO batch_entries (run_id, batch_id, custom_id, task_id,"
            " prompt_sha256) VALUES (?,?,?,?,?)",
            [(run_id, handle.id, e.custom_id, e.task_id, e.prompt_sha256) for e in entries],
        )


def mark_batch(
    db: Db, run_id: str, batch_id: str, *, ended_at: float | None, canceled: bool
) -> None:
    with db.tx() as conn:
        conn.execute(
            "UPDATE batches SET ended_at=coalesce(?, ended_at), canceled=max(canceled, ?)"
            " WHERE run_id=? AND batch_id=?",
            (ended_at, int(canceled), run_id, batch_id),
        )


def entry_done(db: Db, run_id: str, batch_id: str, row: BatchEntryRow) -> None:
    """An entry's outcome (and, when it succeeded, its latency and both prices)."""
    money = [None if v is None else str(v) for v in (row.list_usd, row.cost_usd)]
    outcome = None if row.outcome is None else row.outcome.value
    with db.tx() as conn:
        conn.execute(
            "UPDATE batch_entries SET outcome=?, latency_s=?, list_usd=?, cost_usd=?"
            " WHERE run_id=? AND batch_id=? AND custom_id=?",
            (outcome, row.latency_s, *money, run_id, batch_id, row.custom_id),
        )


def recorded_batches(db: Db, run_id: str) -> list[RecordedBatch]:
    """The run's batches in creation order, each with its entries."""
    batches = db.read(
        "SELECT batch_id, provider, model, display_name, created_at, ended_at, canceled"
        " FROM batches WHERE run_id=? ORDER BY rowid",
        (run_id,),
    )
    found = []
    for batch_id, provider, model, name, created, ended, canceled in batches:
        rows = db.read(
            "SELECT custom_id, task_id, prompt_sha256, outcome, latency_s, list_usd, cost_usd"
            " FROM batch_entries WHERE run_id=? AND batch_id=? ORDER BY rowid",
            (run_id, batch_id),
        )
        entries = tuple(_entry(*row) for row in rows)
        handle = BatchHandle(batch_id, provider, model, name, created)
        found.append(RecordedBatch(handle, entries, ended, bool(canceled)))
    return found


def _entry(cid, task_id, sha, outcome, latency, list_usd, cost_usd) -> BatchEntryRow:
    money = [None if v is None else Decimal(v) for v in (list_usd, cost_usd)]
    return BatchEntryRow(
        cid, task_id, sha, EntryOutcome(outcome) if outcome else None, latency, *money
    )


@dataclass(frozen=True)
class BatchLog:
    """The batch records of one run (what `Store.batch_log(run_id)` hands the runner)."""

    db: Db
    run_id: str

    def record(self, handle: BatchHandle, entries: Sequence[BatchEntryRow]) -> None:
        record_batch(self.db, self.run_id, handle, entries)

    def mark(self, batch_id: str, *, ended_at: float | None = None, canceled: bool = False) -> None:
        mark_batch(self.db, self.run_id, batch_id, ended_at=ended_at, canceled=canceled)

    def entry_done(self, batch_id: str, row: BatchEntryRow) -> None:
        entry_done(self.db, self.run_id, batch_id, row)

    def batches(self) -> list[RecordedBatch]:
        return recorded_batches(self.db, self.run_id)
