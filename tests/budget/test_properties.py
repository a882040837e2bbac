"""Property tests: random runs never cross a cap, and the ledger is the exact sum of costs."""

from __future__ import annotations

import datetime as dt
import itertools
import sqlite3
import threading
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from harness.budget import (
    Budget,
    BudgetExceeded,
    LedgerError,
    MemoryLedger,
    Reservation,
    SqliteLedger,
    estimate_worst_case,
)
from harness.llm import Prompt, Route, Usage
from harness.pricing import Price, cost

D = Decimal
DAY = dt.date(2026, 11, 23)
TASKS = ("a", "b", "c")
money = st.decimals(min_value=0, max_value=3, places=6)
caps = st.one_of(st.none(), st.decimals(min_value=0, max_value=5, places=4))
FAST = settings(max_examples=1000, deadline=None)
SLOW = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


_days = itertools.count()


def _fresh_day() -> dt.date:
    """Each example gets its own day in one shared ledger file: examples stay independent
    without paying for a new database file (and its fsyncs) every time."""
    return DAY + dt.timedelta(days=next(_days))


@pytest.fixture(scope="module")
def ledger_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ledger") / "spend.sqlite"


@dataclass(frozen=True)
class Call:
    """One call in a random run: who reserves how much, and what it really cost."""

    task: str
    reserve: Decimal
    fraction: Decimal  # actual = reserve * fraction; < 0 means the call failed (release)


calls = st.builds(
    Call,
    st.sampled_from(TASKS),
    money,
    st.one_of(st.just(D(-1)), st.decimals(min_value=0, max_value=1, places=3)),
)


def _actual(call: Call) -> Decimal:
    return call.reserve * call.fraction


def _assert_within_caps(budget: Budget, ledger_spent: Decimal, ledger_held: Decimal) -> None:
    if budget.cap_run is not None:
        assert budget.spent_run + budget.reserved_run <= budget.cap_run
    if budget.cap_task is not None:
        for task in TASKS:
            assert budget.spent_task(task) <= budget.cap_task
    if budget.cap_day is not None:
        assert ledger_spent + ledger_held <= budget.cap_day


def _check_refusal(budget: Budget, exc: BudgetExceeded, call: Call) -> None:
    """A refusal is justified: that cap really would be crossed (or had already stopped)."""
    event(f"refused by the {exc.cap_kind} cap")
    assert exc.earlier or exc.spent + exc.reserved + call.reserve > exc.cap
    assert budget.stopped or not exc.stops_run


@FAST
@given(
    run_cap=caps,
    task_cap=caps,
    day_cap=caps,
    script=st.lists(st.tuples(calls, st.booleans()), max_size=40),
)
def test_sequential_runs_stay_within_caps_and_ledger_is_exact(
    run_cap: Decimal | None,
    task_cap: Decimal | None,
    day_cap: Decimal | None,
    script: list[tuple[Call, bool]],
) -> None:
    """Interleaved reserves, settles and releases never cross a cap; sums stay exact."""
    ledger = MemoryLedger()
    budget = Budget(run_cap, cap_task=task_cap, cap_day=day_cap, ledger=ledger, today=lambda: DAY)
    open_calls: list[tuple[Call, Reservation]] = []
    settled: list[Decimal] = []
    for call, close_first in script:
        if close_first and open_calls:
            _close(budget, *open_calls.pop(0), settled)
        try:
            open_calls.append((call, budget.reserve(call.task, call.reserve)))
        except BudgetExceeded as exc:
            _check_refusal(budget, exc, call)
        _assert_within_caps(budget, ledger.spent(DAY), budget.reserved_run)
    for pending in open_calls:
        _close(budget, *pending, settled)
    assert sum(settled, D(0)) == budget.spent_run == ledger.spent(DAY) == budget.spent_day
    assert budget.reserved_run == D(0)


def _close(budget: Budget, call: Call, reservation: Reservation, settled: list[Decimal]) -> None:
    if call.fraction < 0:
        budget.release(reservation)
    else:
        budget.settle(reservation, _actual(call))
        settled.append(_actual(call))


def _worker(
    budget: Budget, script: list[Call], settled: list[Decimal], refusals: list[str]
) -> None:
    for call in script:
        try:
            reservation = budget.reserve(call.task, call.reserve)
        except BudgetExceeded as exc:
            refusals.append(exc.cap_kind)
            continue
        _close(budget, call, reservation, settled)


def _run_threads(budgets: list[Budget], scripts: list[list[Call]]) -> list[Decimal]:
    settled: list[list[Decimal]] = [[] for _ in scripts]
    refusals: list[str] = []
    threads = [
        threading.Thread(target=_worker, args=(budgets[i % len(budgets)], s, settled[i], refusals))
        for i, s in enumerate(scripts)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for kind in sorted(set(refusals)):
        event(f"refused by the {kind} cap")
    return [amount for per_thread in settled for amount in per_thread]


@SLOW
@given(
    run_cap=caps,
    task_cap=caps,
    day_cap=caps,
    scripts=st.lists(st.lists(calls, max_size=8), min_size=2, max_size=6),
)
def test_threads_on_one_run_stay_within_caps_and_persist_exact_sums(
    ledger_path: Path,
    run_cap: Decimal | None,
    task_cap: Decimal | None,
    day_cap: Decimal | None,
    scripts: list[list[Call]],
) -> None:
    """Worker threads sharing one budget and a SQLite ledger: caps hold, sums are exact."""
    day = _fresh_day()
    ledger = SqliteLedger(ledger_path)
    budget = Budget(run_cap, cap_task=task_cap, cap_day=day_cap, ledger=ledger, today=lambda: day)
    settled = _run_threads([budget], scripts)
    totals = SqliteLedger(ledger_path).totals(day)

    _assert_within_caps(budget, totals.spent, totals.held)
    assert sum(settled, D(0)) == budget.spent_run == totals.spent
    assert totals.held == D(0)


@SLOW
@given(
    day_cap=st.decimals(min_value=0, max_value=3, places=4),
    runs=st.integers(min_value=2, max_value=4),
    scripts=st.lists(st.lists(calls, max_size=6), min_size=2, max_size=8),
)
def test_concurrent_runs_sharing_the_day_ledger_never_cross_the_day_cap(
    ledger_path: Path, day_cap: Decimal, runs: int, scripts: list[list[Call]]
) -> None:
    """Several runs (each with its own ledger connection) share one day cap exactly."""
    day = _fresh_day()
    budgets = [
        Budget(D(100), cap_day=day_cap, ledger=SqliteLedger(ledger_path), today=lambda: day)
        for _ in range(runs)
    ]
    settled = _run_threads(budgets, scripts)
    totals = SqliteLedger(ledger_path).totals(day)

    assert totals.spent <= day_cap
    assert sum(settled, D(0)) == totals.spent == sum((b.spent_run for b in budgets), D(0))


prices = st.decimals(min_value=0, max_value=100, places=3)


@FAST
@given(
    text=st.text(max_size=300),
    system=st.text(max_size=50),
    max_tokens=st.integers(min_value=1, max_value=100_000),
    price=st.builds(Price, st.just("m"), st.just("p"), prices, prices, prices, prices),
    split=st.tuples(*[st.floats(min_value=0, max_value=1)] * 3),
    used_output=st.floats(min_value=0, max_value=1),
)
def test_worst_case_bounds_every_call_that_fits_the_byte_bound(
    text: str,
    system: str,
    max_tokens: int,
    price: Price,
    split: tuple[float, float, float],
    used_output: float,
) -> None:
    """Any split of <= one token per byte across fresh/cache input, plus <= max_tokens of
    output, costs no more than the reservation."""
    prompt = Prompt(system, text[: len(text) // 2], text[len(text) // 2 :])
    n = len(system.encode()) + len(text.encode())
    fresh, write = int(n * split[0]), int(n * split[1])
    read = int((n - fresh - write) * split[2])
    usage = Usage(fresh, write, read, int(max_tokens * used_output))

    assert cost(usage, price) <= estimate_worst_case(
        prompt, Route("t", "p", "m", max_tokens), price
    )


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stored=st.one_of(st.text(max_size=12), st.decimals().map(str)))
def test_whatever_a_ledger_row_holds_the_day_cap_holds(tmp_path_factory, stored: str) -> None:
    """Any text stored as a day's spend: the ledger refuses it, or a hold never crosses the cap."""
    path = tmp_path_factory.mktemp("ledger") / "l.sqlite"
    day, cap, amount = dt.date(2026, 11, 23), D(10), D(1)
    SqliteLedger(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO days (day, spent_usd) VALUES (?, ?)", (day.isoformat(), stored))
    db.commit()
    db.close()

    try:
        accepted, totals = SqliteLedger(path).hold(day, "h1", amount, cap)
    except LedgerError:
        return
    assert (not accepted) or (D(0) <= totals.spent and totals.spent + amount <= cap)
