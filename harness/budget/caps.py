"""Budget: the run's caps, reserved before every paid call and settled after it (semantics:
the package docstring)."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal

import structlog

from harness.budget.ledger import BudgetError, Ledger, MemoryLedger, SqliteLedger
from harness.budget.values import BudgetConfig, BudgetExceeded, CallKind, CapKind, Reservation

__all__ = ["Abandoned", "Budget"]

log = structlog.get_logger(__name__)

_POLL_S = 0.25  # a wait for room also wakes this often: for other processes' day holds, a stop


class Abandoned(BudgetError):
    """A wait for room in the budget was given up (the run is stopping): nothing was held."""


def _usd(amount: Decimal | float | str) -> Decimal:
    value = Decimal(str(amount)) if isinstance(amount, float) else Decimal(amount)
    if not value.is_finite() or value < 0:
        raise ValueError(f"a budget amount must be a finite, non-negative USD value: {amount}")
    return value


class Budget:
    """Thread-safe caps for one run; see the package docstring for the semantics."""

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
        self._room = threading.Condition(self._lock)  # notified when a reservation closes
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
    def left_run(self) -> Decimal | None:
        """What the run cap leaves once every call in flight has settled at no cost."""
        with self._lock:
            return None if self.cap_run is None else self.cap_run - self._spent_run

    @property
    def refusal(self) -> BudgetExceeded | None:
        """The run- or day-cap refusal that stopped the run, if one did (its reason)."""
        return self._stop

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
        """Hold `amount` for one call of `task_id` now, or raise BudgetExceeded."""
        return self.reserve_first(task_id, (amount,))[1]

    def reserve_first(
        self,
        task_id: str,
        amounts: Sequence[Decimal],
        *,
        keep_waiting: Callable[[], bool] | None = None,
        calls: Sequence[CallKind] = (),
    ) -> tuple[int, Reservation]:
        """Hold the first of `amounts` (the preferred call first, cheaper fallbacks after) that
        can fit its caps; (its index, the reservation). Raise BudgetExceeded if none can.

        One that could fit only once other calls settle waits for them while `keep_waiting()`
        is true (without it, it is refused at once): in-flight reservations are not spend, and
        stopping the run on them would stop it early. Abandoned when `keep_waiting()` turns false.
        """
        options = [_usd(a) for a in amounts]
        with self._room:
            while True:
                if self._stop is not None:
                    raise self._stop.again()
                if task_id in self._stopped_tasks:
                    raise self._stopped_tasks[task_id].again()
                today = self._today()
                room = self._ledger.headroom(today, self.cap_day)
                index = next(
                    (i for i, a in enumerate(options) if self._can_fit(task_id, a, room)), -1
                )
                amount = options[index]
                refuse = index < 0 or keep_waiting is None
                call = calls[index] if calls else None
                reservation = self._hold(task_id, amount, today, refuse=refuse, call=call)
                if reservation is not None:
                    return max(index, 0), reservation
                if not keep_waiting():  # type: ignore[misc]
                    raise Abandoned(f"gave up waiting for room for ${amount:f} (task {task_id!r})")
                self._room.wait(timeout=_POLL_S)

    def could_fit(self, task_id: str, amount: Decimal) -> bool:
        """Could `amount` be held once every call in flight has settled? Nothing is held."""
        amount = _usd(amount)
        with self._lock:
            if self._stop is not None or task_id in self._stopped_tasks:
                return False
            room = self._ledger.headroom(self._today(), self.cap_day)
            return self._can_fit(task_id, amount, room)

    def try_reserve(self, task_id: str, amount: Decimal) -> Reservation | None:
        """Hold `amount` now if it fits beside everything held, else None. Unlike `reserve`,
        a refusal stops nothing: an optional purchase (a batch entry) that does not fit
        leaves the run and the task free to spend what is left interactively."""
        amount = _usd(amount)
        with self._lock:
            if self._stop is not None or task_id in self._stopped_tasks:
                return None
            return self._hold(task_id, amount, self._today(), refuse=False)

    def _can_fit(self, task_id: str, amount: Decimal, ledger_room: Decimal | None) -> bool:
        """Could `amount` be held once every call in flight has settled (at no cost)?
        `ledger_room` is the ledger's headroom: the day cap's, and on a distributed night
        the night's run cap across every worker too."""
        spent_task = self._spent_task.get(task_id, Decimal(0))
        return not (
            (self.cap_run is not None and self._spent_run + amount > self.cap_run)
            or (self.cap_task is not None and spent_task + amount > self.cap_task)
            or (ledger_room is not None and amount > ledger_room)
        )

    def _hold(
        self,
        task_id: str,
        amount: Decimal,
        today: dt.date,
        *,
        refuse: bool,
        call: CallKind | None = None,
    ) -> Reservation | None:
        """Hold `amount` beside what is held now; if it does not fit, raise BudgetExceeded
        (when `refuse`) or return None (the caller waits for calls in flight to settle)."""
        spent_task = self._spent_task.get(task_id, Decimal(0))
        held_task = self._held_task.get(task_id, Decimal(0))
        blocked: tuple[CapKind, Decimal, Decimal, Decimal] | None = None
        if self.cap_run is not None and self._spent_run + self._held_run + amount > self.cap_run:
            blocked = ("run", self.cap_run, self._spent_run, self._held_run)
        elif self.cap_task is not None and spent_task + held_task + amount > self.cap_task:
            blocked = ("task", self.cap_task, spent_task, held_task)
        else:
            reservation = Reservation(uuid.uuid4().hex, task_id, amount, today)
            accepted, day = self._ledger.hold(today, reservation.id, amount, self.cap_day)
            if not accepted:
                cap = day.cap if day.cap is not None else self.cap_day
                assert cap is not None  # a ledger refuses only against a cap
                blocked = (day.scope, cap, day.spent, day.held)
        if blocked is not None:
            if refuse:
                raise self._refuse(*blocked, amount, task_id, call)
            return None
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
        self._room.notify_all()

    def _refuse(
        self,
        kind: CapKind,
        cap: Decimal,
        spent: Decimal,
        held: Decimal,
        amount: Decimal,
        task_id: str,
        call: CallKind | None,
    ) -> BudgetExceeded:
        exc = BudgetExceeded(kind, cap, spent, held, amount, task_id, call=call)
        fields = {"cap_usd": str(cap), "spent_usd": str(spent), "reserved_usd": str(held)}
        if exc.stops_run:
            self._stop = exc
            log.warning("budget_stopped_run", cap=kind, task_id=task_id, **fields)
        else:
            self._stopped_tasks[task_id] = exc
            log.warning("budget_stopped_task", task_id=task_id, **fields)
        return exc
