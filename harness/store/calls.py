"""The run store's calls: each paid try as it is sent, answered and settled, and the reply
a resume reuses instead of buying it again."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from harness.llm import CallRequest, Completion, RecordedReply, StopReason, Usage
from harness.store.db import Db

__all__ = ["RecordedReply", "RunCallLog", "close_call", "open_call", "recorded_reply"]


IN_FLIGHT = "in_flight"
_CALL_COLUMNS = (
    "run_id, task_id, attempt, step, tier, provider, model, input_tokens, cache_write_tokens,"
    " cache_read_tokens, output_tokens, stop_reason, latency_s, retries, cost_usd, recorded_at,"
    " prompt_sha256"
)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


def open_call(db: Db, run_id: str, request: CallRequest, reserved_usd: Decimal) -> int:
    """A call about to be sent, counted at its worst-case reservation until it is closed.

    A kill -9 while the request is out leaves this row: the vendor may have billed it,
    so a resumed run counts it at the reservation rather than forgetting it.
    """
    route = request.route
    row = (run_id, request.task_id, request.attempt, request.step, route.tier)
    row += (route.provider, route.model, 0, 0, 0, 0, IN_FLIGHT, 0.0, 0)
    row += (str(reserved_usd), _now(), request.prompt.sha256)
    with db.tx() as conn:
        cursor = conn.execute(
            f"INSERT INTO calls ({_CALL_COLUMNS}) VALUES ({','.join('?' * len(row))})", row
        )
        return int(cursor.lastrowid)


def close_call(db: Db, call_id: int, completion: Completion, cost_usd: Decimal) -> None:
    """Replace an open call's reservation with what the vendor actually billed (the exact
    Decimal kept as TEXT). Not synced on its own: the next synced commit carries it, and
    until then a power cut leaves the call at its reservation (harness/store/db.py)."""
    u = completion.usage
    values = (completion.provider, completion.model, u.input_tokens, u.cache_write_tokens)
    values += (u.cache_read_tokens, u.output_tokens, completion.stop_reason.value)
    values += (completion.latency_s, completion.retries, str(cost_usd), _now())
    values += (completion.text, completion.detail, call_id)
    with db.tx(durable=False) as conn:
        conn.execute(
            "UPDATE calls SET provider=?, model=?, input_tokens=?, cache_write_tokens=?,"
            " cache_read_tokens=?, output_tokens=?, stop_reason=?, latency_s=?, retries=?,"
            " cost_usd=?, recorded_at=?, reply=?, detail=? WHERE id=?",
            values,
        )


def recorded_reply(db: Db, run_id: str, request: CallRequest) -> RecordedReply | None:
    """The reply this run already received (and paid for) to this very request: the same
    task, attempt, step and prompt. A resume reuses it instead of buying it again."""
    key = (run_id, request.task_id, request.attempt, request.step, request.prompt.sha256)
    rows = db.read(
        "SELECT tier, provider, model, input_tokens, cache_write_tokens, cache_read_tokens,"
        " output_tokens, stop_reason, latency_s, cost_usd, reply, detail FROM calls"
        " WHERE run_id=? AND task_id=? AND attempt=? AND step=? AND prompt_sha256=?"
        " AND reply IS NOT NULL AND stop_reason NOT IN (?, ?) ORDER BY id DESC LIMIT 1",
        (*key, IN_FLIGHT, StopReason.ERROR.value),
    )
    if not rows:
        return None
    tier, provider, model, fresh, write, read, out, stop, latency, cost, reply, detail = rows[0]
    usage = Usage(fresh, write, read, out)
    completion = Completion(
        reply, usage, StopReason(stop), model, provider, latency, detail=detail or ""
    )
    return RecordedReply(completion, Decimal(cost), tier)


@dataclass(frozen=True)
class RunCallLog:
    """`harness.calls.CallLog` for one run: hand it to the Caller (alongside the RunDir)."""

    db: Db
    run_id: str

    def open_call(self, request: CallRequest, reserved_usd: Decimal) -> int:
        return open_call(self.db, self.run_id, request, reserved_usd)

    def close_call(self, handle: int, completion: Completion, cost_usd: Decimal) -> None:
        close_call(self.db, handle, completion, cost_usd)

    def recorded(self, request: CallRequest) -> RecordedReply | None:
        return recorded_reply(self.db, self.run_id, request)
