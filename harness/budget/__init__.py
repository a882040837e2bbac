"""Budget caps checked before every paid call: reserve the worst case, settle the actual.

Semantics (every amount is exact `Decimal` USD):

- Before a call the pipeline reserves `estimate_worst_case(prompt, route, price)`; after it,
  it settles the reservation to the call's real cost, or releases it if nothing was billed.
- Three caps, each counting what was spent *plus* what is still reserved:
  task (`task_cap_usd`, per task id, optional), run (`--budget-usd`, else the profile's cap
  picked once at run start by local time: `workday_cap_usd` inside the workday hours,
  `overnight_cap_usd` at every other time, weekends included) and day (`daily_cap_usd`,
  optional, per local calendar day, across every run and process on the machine).
- A call offers its worst case and, cheapest last, those of the cheaper tiers it may fall
  back to (`reserve_first`); the first that could fit once every call in flight has settled
  is held, waiting for those calls when it does not fit beside them yet (in-flight
  reservations are not spend). Only when none could fit is the call refused with
  `BudgetExceeded` naming the cap and the numbers. A task-cap refusal stops that task only
  (its later reservations are refused at once); a run- or day-cap refusal stops the run:
  `stopped` turns true and every later `reserve` is refused at once, whatever its size.
  Settling and releasing always work, so in-flight calls still settle. Stop is sticky (a
  new day does not restart a stopped run).
- Settling above the reservation can only happen if a vendor overbills: it is recorded,
  counted, and logged as `budget_overbilled`.
- Every call's cost is charged to the local date on which it was reserved. The day ledger
  (`SqliteLedger`, default `$XDG_STATE_HOME/harness/spend.sqlite`) persists day totals and
  live reservations in one SQLite transaction per change, so concurrent runs see each other
  and a kill -9 leaves a valid file. A dead process's reservations are charged in full to
  their day (its calls may have been billed): a crash never lifts the day cap.
- A resumed run passes its earlier spend (`spent_run`, `spent_tasks`); the day ledger already
  holds it, so it is not charged twice.
"""

from __future__ import annotations

from harness.budget.caps import Abandoned, Budget
from harness.budget.estimate import FRAMING_TOKENS, estimate_worst_case
from harness.budget.ledger import LedgerError, MemoryLedger, SqliteLedger
from harness.budget.values import (
    BudgetConfig,
    BudgetExceeded,
    CallKind,
    Reservation,
    ledger_path_problem,
)

__all__ = [
    "FRAMING_TOKENS",
    "Abandoned",
    "Budget",
    "BudgetConfig",
    "BudgetExceeded",
    "CallKind",
    "LedgerError",
    "MemoryLedger",
    "Reservation",
    "SqliteLedger",
    "estimate_worst_case",
    "ledger_path_problem",
]
