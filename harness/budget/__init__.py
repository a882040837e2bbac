"""Budget caps checked before every paid call: reserve the worst case, settle the actual."""

from __future__ import annotations

from harness.budget._caps import (
    FRAMING_TOKENS,
    Budget,
    BudgetConfig,
    BudgetExceeded,
    LedgerError,
    MemoryLedger,
    Reservation,
    SqliteLedger,
    estimate_worst_case,
)

__all__ = [
    "FRAMING_TOKENS",
    "Budget",
    "BudgetConfig",
    "BudgetExceeded",
    "LedgerError",
    "MemoryLedger",
    "Reservation",
    "SqliteLedger",
    "estimate_worst_case",
]
