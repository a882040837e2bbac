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
from harness.budget._types import ledger_path_problem

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
    "ledger_path_problem",
]
