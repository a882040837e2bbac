"""Budget caps checked before every paid call: reserve the worst case, settle the actual.

Semantics (every amount is exact `Decimal` USD):

- Before a call the pipeline reserves `estimate_worst_case(prompt, route, price)`; after it,
  it settles the reservation to the call's real cost, or releases it if nothing was billed.
- Three caps, each counting what was spent *plus* what is still reserved:
  task (`task_cap_usd`, per task id, optional), run (`--budget-usd`, else the profile's cap
  picked once at run start by local time: `workday_cap_usd` inside the workday hours,
  `overnight_cap_usd` at every other time, weekends included) and day (`daily_cap_usd`,
  optional, per local calendar day, across every run and process on the machine).
- A reservation that would cross a cap is refused with `BudgetExceeded` naming the cap.
  A task-cap refusal stops that task only (its later reservations are refused at once);
  a run- or day-cap refusal stops the run: `stopped` turns true and every later `reserve`
  is refused at once, whatever its size. Settling and releasing always work, so in-flight
  calls still settle. Stop is sticky (a new day does not restart a stopped run).
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

import datetime as dt
import threading
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal

import structlog

from harness.budget._ledger import (
    BudgetError,
    DayTotals,
    Ledger,
    LedgerError,
    MemoryLedger,
    SqliteLedger,
)
from harness.budget._types import (
    BudgetConfig,
    BudgetExceeded,
    CapKind,
    Reservation,
    default_ledger_path,
)
from harness.pricing import MILLION, Price
from harness.providers.base import Prompt, Route

__all__ = [
    "FRAMING_TOKENS",
    "Budget",
    "BudgetConfig",
    "BudgetError",
    "BudgetExceeded",
    "DayTotals",
    "Ledger",
    "LedgerError",
    "MemoryLedger",
    "Reservation",
    "SqliteLedger",
    "default_ledger_path",
    "estimate_worst_case",
]

log = structlog.get_logger(__name__)

# Role markers and system-prompt wrapping that vendors add around the text we send.
FRAMING_TOKENS = 256


def estimate_worst_case(prompt: Prompt, route: Route, price: Price) -> Decimal:
    """An upper bound on one call's cost, reserved before the call.

    Input tokens are bounded by the prompt's UTF-8 byte count: byte-level BPE (Claude, GPT)
    and SentencePiece with byte fallback (Gemini) emit at least one byte per token, so no
    text tokenizes into more tokens than bytes (chars/2 is not a bound: an emoji is one
    char and several tokens). FRAMING_TOKENS covers the vendor's message wrapping. Input is
    priced at the dearest input price (fresh, cache write or cache read: any split of the
    prompt between them costs no more); output is the route's max_tokens (which bounds
    thinking too) at the output price.
    """
    parts = (prompt.system, prompt.stable, prompt.variable)
    input_tokens = sum(len(part.encode("utf-8")) for part in parts) + FRAMING_TOKENS
    input_price = max(price.input, price.cache_write, price.cache_read)
    return (input_tokens * input_price + route.max_tokens * price.output) / MILLION


def _usd(amount: Decimal | float | str) -> Decimal:
    value = Decimal(str(amount)) if isinstance(amount, float) else Decimal(amount)
    if not value.is_finite() or value < 0:
        raise ValueError(f"a budget amount must be a finite, non-negative USD value: {amount}")
    return value


class Budget:
    """Thread-safe caps for one run; see the module docstring for the semantics."""

    def __init__(
        self,
        cap_run: Decimal | None,
        *,
        cap_task: Decimal | None = None,
        cap_day: Decimal | None = None,
        ledger: Ledger | None = None,
        spent_run: Decimal = Decimal(0),
        spent_tasks: Mapping[str, Decimal] | None = None,
        today: Callable[[], dt.date] = dt.date.today,
    ) -> None:
        self.cap_run = None if cap_run is None else _usd(cap_run)
        self.cap_task = None if cap_task is None else _usd(cap_task)
        self.cap_day = None if cap_day is None else _usd(cap_day)
        self._ledger: Ledger = ledger if ledger is not None else MemoryLedger()
        self._today = today
        self._lock = threading.Lock()
        self._spent_run = _usd(spent_run)
        self._spent_task = {k: _usd(v) for k, v in (spent_tasks or {}).items()}
        self._held_run = Decimal(0)
        self._held_task: dict[str, Decimal] = {}
        self._open: dict[str, Reservation] = {}
        self._stop: BudgetExceeded | None = None
        self._stopped_tasks: dict[str, BudgetExceeded] = {}

    @classmethod
    def from_config(
        cls,
        config: BudgetConfig,
        *,
        budget_usd: Decimal | float | None = None,
        now: dt.datetime | None = None,
        ledger: Ledger | None = None,
        spent_run: Decimal = Decimal(0),
        spent_tasks: Mapping[str, Decimal] | None = None,
    ) -> Budget:
        """A run's budget: cap from `--budget-usd` or the profile at `now` (default: now)."""
        now = now or dt.datetime.now()
        run_cap = config.run_cap(budget_usd, now)
        log.info(
            "budget_configured",
            run_cap_usd=str(run_cap),
            profile="cli" if budget_usd is not None else config.profile_at(now),
            task_cap_usd=None if config.task_cap_usd is None else str(config.task_cap_usd),
            daily_cap_usd=None if config.daily_cap_usd is None else str(config.daily_cap_usd),
        )
        return cls(
            run_cap,
            cap_task=config.task_cap_usd,
            cap_day=config.daily_cap_usd,
            ledger=ledger if ledger is not None else SqliteLedger(config.ledger_path),
            spent_run=spent_run,
            spent_tasks=spent_tasks,
        )

    @property
    def stopped(self) -> bool:
        """True once a run or day cap refused a reservation: no new call may start."""
        return self._stop is not None

    @property
    def spent_run(self) -> Decimal:
        with self._lock:
            return self._spent_run

    @property
    def reserved_run(self) -> Decimal:
        """What in-flight calls hold right now."""
        with self._lock:
            return self._held_run

    def spent_task(self, task_id: str) -> Decimal:
        with self._lock:
            return self._spent_task.get(task_id, Decimal(0))

    @property
    def spent_day(self) -> Decimal:
        """Settled spend of today (local date) in the ledger, every run and process."""
        return self._ledger.spent(self._today())

    def reserve(self, task_id: str, amount: Decimal) -> Reservation:
        """Hold `amount` for one call of `task_id`, or raise BudgetExceeded."""
        amount = _usd(amount)
        with self._lock:
            if self._stop is not None:
                raise self._stop.again(task_id, amount)
            if task_id in self._stopped_tasks:
                raise self._stopped_tasks[task_id].again(task_id, amount)
            if (
                self.cap_run is not None
                and self._spent_run + self._held_run + amount > self.cap_run
            ):
                raise self._refuse(
                    "run", self.cap_run, self._spent_run, self._held_run, amount, task_id
                )
            spent_task = self._spent_task.get(task_id, Decimal(0))
            held_task = self._held_task.get(task_id, Decimal(0))
            if self.cap_task is not None and spent_task + held_task + amount > self.cap_task:
                raise self._refuse("task", self.cap_task, spent_task, held_task, amount, task_id)
            reservation = Reservation(uuid.uuid4().hex, task_id, amount, self._today())
            accepted, day = self._ledger.hold(reservation.day, reservation.id, amount, self.cap_day)
            if not accepted:
                assert self.cap_day is not None  # a ledger refuses only against a cap
                raise self._refuse("day", self.cap_day, day.spent, day.held, amount, task_id)
            self._open[reservation.id] = reservation
            self._held_run += amount
            self._held_task[task_id] = held_task + amount
            return reservation

    def settle(self, reservation: Reservation, actual: Decimal) -> None:
        """Replace the reservation with the call's actual cost, in memory and in the ledger."""
        actual = _usd(actual)
        with self._lock:
            self._close(reservation)
            self._spent_run += actual
            task_id = reservation.task_id
            self._spent_task[task_id] = self._spent_task.get(task_id, Decimal(0)) + actual
            if actual > reservation.amount:
                log.warning(
                    "budget_overbilled",
                    task_id=task_id,
                    reserved_usd=str(reservation.amount),
                    actual_usd=str(actual),
                )
            self._ledger.settle(reservation.day, reservation.id, actual)

    def release(self, reservation: Reservation) -> None:
        """Drop a reservation whose call never happened or failed before billing."""
        with self._lock:
            self._close(reservation)
            self._ledger.release(reservation.id)

    def _close(self, reservation: Reservation) -> None:
        if self._open.pop(reservation.id, None) is None:
            raise ValueError(f"reservation {reservation.id} was already settled or released")
        self._held_run -= reservation.amount
        self._held_task[reservation.task_id] -= reservation.amount

    def _refuse(
        self,
        kind: CapKind,
        cap: Decimal,
        spent: Decimal,
        held: Decimal,
        amount: Decimal,
        task_id: str,
    ) -> BudgetExceeded:
        exc = BudgetExceeded(kind, cap, spent, held, amount, task_id)
        fields = {"cap_usd": str(cap), "spent_usd": str(spent), "reserved_usd": str(held)}
        if exc.stops_run:
            self._stop = exc
            log.warning("budget_stopped_run", cap=kind, task_id=task_id, **fields)
        else:
            self._stopped_tasks[task_id] = exc
            log.warning("budget_stopped_task", task_id=task_id, **fields)
        return exc
