"""The day ledger behind the daily budget cap: settled spend and live holds per local date."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal, Protocol

import structlog

from harness.budget.rows import DamagedLedger, check_rows, read_amount

__all__ = ["BudgetError", "DayTotals", "Ledger", "LedgerError", "MemoryLedger", "SqliteLedger"]

log = structlog.get_logger("harness.budget")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS days (day TEXT PRIMARY KEY, spent_usd TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS holds (
    id TEXT PRIMARY KEY, day TEXT NOT NULL, pid INTEGER NOT NULL, usd TEXT NOT NULL
);
"""


class BudgetError(Exception):
    """Base class of the budget's errors."""


class LedgerError(BudgetError):
    """The day ledger could not be read or written, or is damaged; no call may start."""


@dataclass(frozen=True)
class DayTotals:
    """One local day across every run: settled spend and live reservations. A ledger shared
    by a distributed night's workers also holds the night's run cap: when that cap refuses a
    hold, `scope` is "run" and `cap` is that cap (docs/scale.md, "The budget on Temporal")."""

    spent: Decimal
    held: Decimal
    scope: Literal["day", "run"] = "day"
    cap: Decimal | None = None


class Ledger(Protocol):
    """Where day spend lives. `hold` checks the cap and records the hold atomically."""

    def hold(
        self, day: dt.date, hold_id: str, amount: Decimal, cap: Decimal | None
    ) -> tuple[bool, DayTotals]: ...

    def settle(self, day: dt.date, hold_id: str, actual: Decimal) -> None: ...

    def release(self, hold_id: str) -> None: ...

    def spent(self, day: dt.date) -> Decimal: ...

    def headroom(self, day: dt.date, cap: Decimal | None) -> Decimal | None:
        """What one hold could still take once every hold has settled at no cost (None:
        no limit). The day's cap less its spend; a shared ledger also the night's run cap."""
        ...


def _headroom(spent: Decimal, cap: Decimal | None) -> Decimal | None:
    return None if cap is None else cap - spent


def _fits(totals: DayTotals, amount: Decimal, cap: Decimal | None) -> bool:
    return cap is None or totals.spent + totals.held + amount <= cap


class MemoryLedger:
    """A ledger for one process only (tests, simulator runs): nothing is persisted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spent: dict[dt.date, Decimal] = {}
        self._holds: dict[str, tuple[dt.date, Decimal]] = {}

    def hold(
        self, day: dt.date, hold_id: str, amount: Decimal, cap: Decimal | None
    ) -> tuple[bool, DayTotals]:
        with self._lock:
            held = sum((a for d, a in self._holds.values() if d == day), Decimal(0))
            totals = DayTotals(self._spent.get(day, Decimal(0)), held)
            accepted = _fits(totals, amount, cap)
            if accepted:
                self._holds[hold_id] = (day, amount)
            return accepted, totals

    def settle(self, day: dt.date, hold_id: str, actual: Decimal) -> None:
        with self._lock:
            self._holds.pop(hold_id, None)
            self._spent[day] = self._spent.get(day, Decimal(0)) + actual

    def release(self, hold_id: str) -> None:
        with self._lock:
            self._holds.pop(hold_id, None)

    def spent(self, day: dt.date) -> Decimal:
        with self._lock:
            return self._spent.get(day, Decimal(0))

    def headroom(self, day: dt.date, cap: Decimal | None) -> Decimal | None:
        return None if cap is None else _headroom(self.spent(day), cap)


_PATH_LOCKS: dict[Path, threading.Lock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


def _path_lock(path: Path) -> threading.Lock:
    """One lock per ledger file in this process: threads queue here instead of in SQLite's
    busy handler, which sleeps in steps of up to 100 ms."""
    with _PATH_LOCKS_GUARD:
        return _PATH_LOCKS.setdefault(path, threading.Lock())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class SqliteLedger:
    """The machine's day ledger: one SQLite file shared by every run and process.

    Each change is one `BEGIN IMMEDIATE` transaction: SQLite's write lock serialises
    processes, and its write-ahead log makes a kill -9 mid-write roll back to the last
    commit. synchronous=NORMAL skips the fsync per commit (a power cut may lose the last
    commits, never consistency); the file must be on a local disk (WAL needs shared memory).
    Amounts are stored as decimal text and summed in Python, so totals stay exact.
    Holds record their process id; the holds of a process that died are charged in full.
    """

    def __init__(self, path: Path, *, timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self._timeout_s = timeout_s
        self._local = _path_lock(self.path.absolute())
        self._db: sqlite3.Connection | None = None
        self._db_pid = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerError(self._explain(exc)) from exc
        with self._transaction() as db:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            check_rows(self.path, db)

    def hold(
        self, day: dt.date, hold_id: str, amount: Decimal, cap: Decimal | None
    ) -> tuple[bool, DayTotals]:
        with self._transaction() as db:
            self._charge_dead_holds(db)
            totals = self._totals(db, day.isoformat())
            accepted = _fits(totals, amount, cap)
            if accepted:
                db.execute(
                    "INSERT INTO holds (id, day, pid, usd) VALUES (?, ?, ?, ?)",
                    (hold_id, day.isoformat(), os.getpid(), str(amount)),
                )
            return accepted, totals

    def settle(self, day: dt.date, hold_id: str, actual: Decimal) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM holds WHERE id = ?", (hold_id,))
            self._add_spend(db, day.isoformat(), actual)

    def release(self, hold_id: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM holds WHERE id = ?", (hold_id,))

    def spent(self, day: dt.date) -> Decimal:
        with self._transaction() as db:
            return self._spent(db, day.isoformat())

    def headroom(self, day: dt.date, cap: Decimal | None) -> Decimal | None:
        return None if cap is None else _headroom(self.spent(day), cap)

    def totals(self, day: dt.date) -> DayTotals:
        """Settled spend and live holds of `day`, as `hold` would see them."""
        with self._transaction() as db:
            self._charge_dead_holds(db)
            return self._totals(db, day.isoformat())

    def close(self) -> None:
        """Close this process's connection (the file stays; reopened on next use)."""
        with self._local:
            if self._db is not None:
                self._db.close()
                self._db = None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._local:
            db = self._connection()
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise LedgerError(self._explain(exc)) from exc
            except DamagedLedger as exc:
                raise LedgerError(str(exc)) from None
            finally:
                if db.in_transaction:
                    db.execute("ROLLBACK")

    def _connection(self) -> sqlite3.Connection:
        """One open connection per ledger and process: reopening per change would checkpoint
        and fsync the log every time. A forked child opens its own."""
        if self._db is not None and self._db_pid == os.getpid():
            return self._db
        try:
            db = sqlite3.connect(
                self.path, timeout=self._timeout_s, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise LedgerError(self._explain(exc)) from exc
        self._db, self._db_pid = db, os.getpid()
        return db

    def _explain(self, exc: Exception) -> str:
        return (
            f"spend ledger {self.path}: {exc}; make sure its folder is writable on a local "
            "disk, or set budget.ledger_path in harness.yaml"
        )

    def _spent(self, db: sqlite3.Connection, day: str) -> Decimal:
        row = db.execute("SELECT spent_usd FROM days WHERE day = ?", (day,)).fetchone()
        return read_amount(self.path, "days", day, row[0]) if row else Decimal(0)

    def _add_spend(self, db: sqlite3.Connection, day: str, amount: Decimal) -> None:
        db.execute(
            "INSERT INTO days (day, spent_usd) VALUES (?, ?) "
            "ON CONFLICT(day) DO UPDATE SET spent_usd = excluded.spent_usd",
            (day, str(self._spent(db, day) + amount)),
        )

    def _totals(self, db: sqlite3.Connection, day: str) -> DayTotals:
        rows = db.execute("SELECT id, usd FROM holds WHERE day = ?", (day,)).fetchall()
        held = sum((read_amount(self.path, "holds", i, usd) for i, usd in rows), Decimal(0))
        return DayTotals(self._spent(db, day), held)

    def _charge_dead_holds(self, db: sqlite3.Connection) -> None:
        """A process that died with holds may have been billed for those calls: charge each
        hold in full (the worst case) to its day, so a crash can never lift the day cap."""
        rows = db.execute("SELECT id, day, pid, usd FROM holds WHERE pid != ?", (os.getpid(),))
        dead = [row for row in rows.fetchall() if not _alive(row[2])]
        charged = Decimal(0)
        for hold_id, day, _pid, usd in dead:
            amount = read_amount(self.path, "holds", hold_id, usd)
            db.execute("DELETE FROM holds WHERE id = ?", (hold_id,))
            self._add_spend(db, day, amount)
            charged += amount
        if dead:
            log.warning(
                "ledger_dead_holds_charged",
                pids=sorted({row[2] for row in dead}),
                holds=len(dead),
                charged_usd=str(charged),
            )
