"""The night's batch report, read back from the run store (so a resumed run reports the
batches its first process made too)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from harness.llm import EntryOutcome
from harness.results import BatchReport, TaskBatch
from harness.store import RecordedBatch

__all__ = ["batch_notes", "batch_report"]


def batch_report(batches: Sequence[RecordedBatch]) -> BatchReport | None:
    """Counts, list price against batch price, and each task's entry; None with no batch."""
    entries = [e for b in batches for e in b.entries]
    if not entries:
        return None
    counts = {o: sum(e.outcome is o for e in entries) for o in EntryOutcome}
    done = [e for e in entries if e.outcome is EntryOutcome.SUCCEEDED]
    return BatchReport(
        submitted=len(entries),
        succeeded=counts[EntryOutcome.SUCCEEDED],
        errored=counts[EntryOutcome.ERRORED],
        expired=counts[EntryOutcome.EXPIRED],
        canceled=counts[EntryOutcome.CANCELED],
        fell_back=sum(e.outcome not in (None, EntryOutcome.SUCCEEDED) for e in entries),
        list_usd=sum((e.list_usd or Decimal(0) for e in done), Decimal(0)),
        cost_usd=sum((e.cost_usd or Decimal(0) for e in done), Decimal(0)),
        tasks={
            e.task_id: TaskBatch(e.outcome.value if e.outcome else "pending", e.latency_s)
            for e in entries
        },
    )


def batch_notes(report: BatchReport | None) -> tuple[str, ...]:
    """Entries that did not succeed: their writes ran interactively, at the list price."""
    if report is None or not report.fell_back:
        return ()
    return (
        f"{report.fell_back} of {report.submitted} batch entries did not succeed "
        f"({report.errored} errored, {report.expired} expired, {report.canceled} canceled, "
        "e.g. at the batch deadline); those requests ran interactively at the list "
        "price. A later deadline (batch.deadline in harness.yaml) leaves the vendor more time",
    )
