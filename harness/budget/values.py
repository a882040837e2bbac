"""The budget's values: its config (harness.yaml `budget:`), reservations and refusals."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.budget.ledger import BudgetError
from harness.results import money

__all__ = [
    "BudgetConfig",
    "BudgetExceeded",
    "CallKind",
    "CapKind",
    "Reservation",
    "default_ledger_path",
    "ledger_path_problem",
]

CapKind = Literal["task", "run", "day"]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_RAISE = {
    "task": "raise budget.task_cap_usd in harness.yaml to at least {need}",
    "run": "raise --budget-usd to at least {need} (or budget.workday_cap_usd / "
    "budget.overnight_cap_usd)",
    "day": "raise budget.daily_cap_usd in harness.yaml to at least {need}, or wait for the "
    "next local day",
}


@dataclass(frozen=True)
class CallKind:
    """Which call a reservation is for, so a refusal can say what to lower."""

    step: str
    tier: str
    max_tokens: int

    def __str__(self) -> str:
        return f"{self.step} on {self.tier}, {self.max_tokens} output tokens"


def default_ledger_path() -> Path:
    """Where the day ledger lives unless configured: per user, shared by every run."""
    state = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(state) / "harness" / "spend.sqlite"


def ledger_path_problem(path: Path) -> str | None:
    """Why the day ledger cannot live at `path` (checked at start-up, before any run folder
    exists), or None: it must be a regular file, or not exist yet under folders."""
    if path.is_dir():
        return f"{path} is a directory; name the ledger file in it, e.g. {path / 'spend.sqlite'}"
    if path.exists() and not path.is_file():
        return f"{path} is not a regular file; name a file for the spend ledger"
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is a file, not a folder; choose another ledger path"
            if not os.access(parent, os.W_OK | os.X_OK):
                return f"{parent} is not writable; choose a ledger path you can write"
            break
    return None


class BudgetConfig(BaseModel):
    """The `budget:` section of the operator's harness.yaml (defaults: data/defaults.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_cap_usd: Decimal | None = Field(ge=0)
    daily_cap_usd: Decimal | None = Field(ge=0)
    workday_cap_usd: Decimal = Field(ge=0)
    overnight_cap_usd: Decimal = Field(ge=0)
    workday_days: tuple[Weekday, ...]
    workday_start: dt.time
    workday_end: dt.time
    # null: $XDG_STATE_HOME/harness/spend.sqlite, resolved per load (the variable may change)
    ledger_path: Path

    @field_validator("workday_start", "workday_end", mode="before")
    @classmethod
    def _quoted_time(cls, value: object) -> object:
        if isinstance(value, int):  # YAML 1.1 reads an unquoted 19:00 as the number 1140
            raise ValueError("write the time in quotes, e.g. '19:00'")
        return value

    @field_validator("workday_start", "workday_end")
    @classmethod
    def _local_time(cls, value: dt.time) -> dt.time:
        if value.tzinfo is not None:
            raise ValueError("write a local time without a UTC offset, e.g. '08:00'")
        return value

    @field_validator("ledger_path", mode="before")
    @classmethod
    def _default_path(cls, value: object) -> object:
        return default_ledger_path() if value is None else value

    @field_validator("ledger_path")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        path = value.expanduser()
        problem = ledger_path_problem(path)
        if problem:
            raise ValueError(problem)
        return path

    @model_validator(mode="after")
    def _ordered_hours(self) -> BudgetConfig:
        if self.workday_start >= self.workday_end:
            raise ValueError(
                f"workday_start {self.workday_start} must be before workday_end "
                f"{self.workday_end}; the overnight profile covers every other hour"
            )
        return self

    def profile_at(self, now: dt.datetime) -> Literal["workday", "overnight"]:
        """The profile in force at local time `now`."""
        in_day = _WEEKDAYS[now.weekday()] in self.workday_days
        in_hours = self.workday_start <= now.time() < self.workday_end
        return "workday" if in_day and in_hours else "overnight"

    def run_cap(self, budget_usd: Decimal | float | None, now: dt.datetime) -> Decimal:
        """The run's cap: `--budget-usd` when given, else the profile's cap at `now`."""
        if budget_usd is not None:
            return Decimal(str(budget_usd))
        if self.profile_at(now) == "workday":
            return self.workday_cap_usd
        return self.overnight_cap_usd


class BudgetExceeded(BudgetError):
    """A reservation refused because it would cross the `cap_kind` cap (task, run or day).

    Its message is the reason every task it stopped reports, in numbers: the cap, what was
    spent and reserved, this call's worst case (and which call), and what to change.
    """

    def __init__(
        self,
        cap_kind: CapKind,
        cap: Decimal,
        spent: Decimal,
        reserved: Decimal,
        requested: Decimal,
        task_id: str,
        *,
        call: CallKind | None = None,
        earlier: bool = False,
    ) -> None:
        self.cap_kind, self.cap, self.task_id, self.call = cap_kind, cap, task_id, call
        self.spent, self.reserved, self.requested = spent, reserved, requested
        self.earlier = earlier  # refused at once: the run (or task) had already stopped
        super().__init__(self._message())

    @property
    def stops_run(self) -> bool:
        """True for the run and day caps: the run stops now; a task cap stops one task."""
        return self.cap_kind != "task"

    def again(self) -> BudgetExceeded:
        """The refusal every later reservation gets once this one stopped the run or task:
        the same numbers and words, so every task it stopped gives one reason."""
        return BudgetExceeded(
            self.cap_kind,
            self.cap,
            self.spent,
            self.reserved,
            self.requested,
            self.task_id,
            call=self.call,
            earlier=True,
        )

    def _message(self) -> str:
        scope = f"task {self.task_id!r}" if self.cap_kind == "task" else self.cap_kind
        need = self.spent + self.reserved + self.requested
        which = f" ({self.call})" if self.call is not None else ""
        change = _RAISE[self.cap_kind].format(need=money(need))
        if self.call is not None:
            change += (
                f", or lower step_max_tokens.{self.call.step} or routes.{self.call.tier}.max_tokens"
            )
        return (
            f"{scope} budget cap {money(self.cap)} reached: spent {money(self.spent)} + "
            f"reserved {money(self.reserved)} + the next call's worst case "
            f"{money(self.requested)}{which} = {money(need)}; to go on, {change}"
        )


@dataclass(frozen=True)
class Reservation:
    """A worst-case amount held for one call until it is settled or released."""

    id: str
    task_id: str
    amount: Decimal
    day: dt.date
