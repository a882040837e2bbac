"""The day ledger's stored amounts read back strictly: a damaged row must never lift a cap."""

from __future__ import annotations

import sqlite3
from decimal import Decimal, InvalidOperation
from pathlib import Path

__all__ = ["DamagedLedger", "check_rows", "read_amount"]


class DamagedLedger(ValueError):
    """A ledger row holds no usable amount of USD; the message says which and what to do."""


def read_amount(path: Path, table: str, key: str, text: object) -> Decimal:
    """`text` as a finite amount of at least zero, or DamagedLedger naming the row and the fix.

    A negative amount would lift the day cap by as much, and NaN or garbage would make every
    comparison with the cap fail: either is a ledger someone or something damaged.
    """
    try:
        amount = Decimal(str(text)) if isinstance(text, str) else None
    except InvalidOperation:
        amount = None
    if amount is not None and amount.is_finite() and amount >= 0:
        return amount
    column = "spent_usd" if table == "days" else "usd"
    raise DamagedLedger(
        f"spend ledger {path} is damaged: {table} row {key!r} has {column} {text!r}, not an "
        f"amount of USD, so the day cap cannot be enforced; restore the file from a backup, "
        f"or correct the row (sqlite3 {path} \"UPDATE {table} SET {column} = '12.34' WHERE "
        f"{'day' if table == 'days' else 'id'} = '{key}'\" with the real amount); moving the "
        "file aside makes the harness forget every day's spend so far"
    )


def check_rows(path: Path, db: sqlite3.Connection) -> None:
    """Every stored amount reads back (checked at start-up, before any run folder exists)."""
    for day, text in db.execute("SELECT day, spent_usd FROM days"):
        read_amount(path, "days", day, text)
    for hold_id, text in db.execute("SELECT id, usd FROM holds"):
        read_amount(path, "holds", hold_id, text)
