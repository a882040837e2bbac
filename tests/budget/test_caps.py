"""Budget: worst-case estimates, reserve/settle/release, caps, config and the day ledger."""

from __future__ import annotations

import datetime as dt
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from structlog.testing import capture_logs

from harness.budget import (
    FRAMING_TOKENS,
    Abandoned,
    Budget,
    BudgetConfig,
    BudgetExceeded,
    CallKind,
    LedgerError,
    MemoryLedger,
    SqliteLedger,
    estimate_worst_case,
)
from harness.llm import Prompt, Route, Usage
from harness.pricing import Price, cost

D = Decimal
PRICE = Price("m", "p", D("3"), D("15"), D("3.75"), D("0.30"))
ROUTE = Route("mid", "p", "m", max_tokens=1000)
TODAY = dt.date(2026, 11, 23)


def _budget(**kwargs: object) -> Budget:
    kwargs.setdefault("cap_run", D("1"))
    return Budget(today=lambda: TODAY, **kwargs)  # type: ignore[arg-type]


# --- estimate_worst_case ---------------------------------------------------------------


def test_estimate_prices_bytes_at_the_dearer_input_price_plus_max_output() -> None:
    """Input = UTF-8 bytes + framing at max(input, cache_write); output = max_tokens."""
    prompt = Prompt(system="ab", stable="cd", variable="é")  # 2 + 2 + 2 bytes

    expected = (D(6 + FRAMING_TOKENS) * D("3.75") + D(1000) * D("15")) / D(1_000_000)
    assert estimate_worst_case(prompt, ROUTE, PRICE) == expected


def test_estimate_counts_emoji_as_bytes_not_chars() -> None:
    """An emoji (1 char, 4 bytes, several tokens) is bounded by its bytes."""
    one = estimate_worst_case(Prompt("", "", "🙂"), ROUTE, PRICE)
    four = estimate_worst_case(Prompt("", "", "abcd"), ROUTE, PRICE)

    assert four == one


def test_estimate_bounds_any_cost_with_at_most_one_token_per_byte() -> None:
    """A call that used every byte as a token and all max_tokens still costs no more."""
    prompt = Prompt("sys", "stable part " * 50, "variable")
    n = len(prompt.system.encode()) + len(prompt.text.encode())
    usage = Usage(input_tokens=n // 2, cache_write_tokens=n - n // 2, output_tokens=1000)

    assert cost(usage, PRICE) <= estimate_worst_case(prompt, ROUTE, PRICE)


# --- reserve / settle / release ----------------------------------------------------------


def test_settle_replaces_the_reservation_with_the_actual_cost() -> None:
    """After settling, spend is the actual cost and nothing stays reserved."""
    budget = _budget()
    r = budget.reserve("a", D("0.4"))
    budget.settle(r, D("0.1"))

    assert (
        budget.spent_run,
        budget.spent_task("a"),
        budget.reserved_run,
        budget.spent_day,
    ) == (D("0.1"), D("0.1"), D(0), D("0.1"))


def test_reservations_count_against_the_cap_until_settled() -> None:
    """Outstanding reservations plus spend may not cross the run cap."""
    budget = _budget()
    budget.reserve("a", D("0.6"))

    with pytest.raises(BudgetExceeded) as info:
        budget.reserve("b", D("0.5"))
    assert info.value.cap_kind == "run"


def test_try_reserve_that_does_not_fit_stops_nothing() -> None:
    """An optional hold (a batch entry) that does not fit is None, and the run goes on."""
    budget = _budget()
    budget.reserve("a", D("0.6"))

    refused = budget.try_reserve("b", D("0.5"))
    held = budget.try_reserve("b", D("0.4"))

    assert (refused, budget.stopped, held is not None, budget.reserved_run) == (
        None,
        False,
        True,
        D("1.0"),
    )


def test_release_frees_the_room_and_spends_nothing() -> None:
    """A released reservation leaves no spend and frees its amount."""
    budget = _budget()
    budget.release(budget.reserve("a", D("0.9")))
    budget.reserve("a", D("0.9"))

    assert budget.spent_run == D(0)


def test_a_reservation_closes_only_once() -> None:
    """Settling twice is a programming error, not a double charge."""
    budget = _budget()
    r = budget.reserve("a", D("0.1"))
    budget.settle(r, D("0.1"))

    with pytest.raises(ValueError, match="already settled or released"):
        budget.settle(r, D("0.1"))


def test_negative_amounts_are_refused() -> None:
    """A negative reservation would widen the cap; it is a ValueError."""
    with pytest.raises(ValueError, match="non-negative"):
        _budget().reserve("a", D("-1"))


def test_overbilling_is_counted_and_logged() -> None:
    """Settling above the reservation is recorded as spend and warned about."""
    budget = _budget()
    r = budget.reserve("a", D("0.1"))
    with capture_logs() as logs:
        budget.settle(r, D("0.3"))

    assert budget.spent_run == D("0.3")
    assert [(e["event"], e["log_level"], e["reserved_usd"], e["actual_usd"]) for e in logs] == [
        ("budget_overbilled", "warning", "0.1", "0.3")
    ]


# --- caps --------------------------------------------------------------------------------


def test_run_cap_refusal_stops_the_run_for_every_later_call() -> None:
    """Once the run cap refuses, even a zero reservation is refused at once."""
    budget = _budget()
    budget.settle(budget.reserve("a", D("0.9")), D("0.9"))
    with capture_logs() as logs, pytest.raises(BudgetExceeded):
        budget.reserve("a", D("0.2"))
    with pytest.raises(BudgetExceeded) as later:
        budget.reserve("b", D("0"))

    assert budget.stopped and later.value.earlier and later.value.stops_run
    assert [e["event"] for e in logs] == ["budget_stopped_run"]


def test_in_flight_calls_still_settle_after_the_stop() -> None:
    """Stopping refuses new reservations but settles the ones already made."""
    budget = _budget()
    r = budget.reserve("a", D("0.5"))
    with pytest.raises(BudgetExceeded):
        budget.reserve("b", D("0.6"))
    budget.settle(r, D("0.4"))

    assert budget.spent_run == D("0.4")


def test_task_cap_stops_only_that_task() -> None:
    """A task-cap refusal stops its task; other tasks still reserve."""
    budget = _budget(cap_task=D("0.3"))
    budget.settle(budget.reserve("a", D("0.2")), D("0.2"))
    with pytest.raises(BudgetExceeded) as first:
        budget.reserve("a", D("0.2"))
    with pytest.raises(BudgetExceeded) as later:
        budget.reserve("a", D("0"))
    budget.reserve("b", D("0.3"))

    assert (first.value.cap_kind, budget.stopped, later.value.earlier) == ("task", False, True)


def test_refusal_message_names_the_cap_and_the_numbers() -> None:
    """The message says which cap, the cap, spend, reservations, the request and a fix."""
    budget = _budget()
    budget.settle(budget.reserve("a", D("0.5")), D("0.25"))
    budget.reserve("a", D("0.5"))

    with pytest.raises(BudgetExceeded) as info:
        budget.reserve("a", D("0.3"))
    assert str(info.value) == (
        "run budget cap $1.00 reached: spent $0.25 + reserved $0.50 + the next call's worst "
        "case $0.30 = $1.05; to go on, raise --budget-usd to at least $1.05 (or "
        "budget.workday_cap_usd / budget.overnight_cap_usd)"
    )


def test_refusal_names_the_call_and_keeps_every_digit_of_a_small_cap() -> None:
    """A $0.0555 cap prints as $0.0555, not $0.06; the refusal says which call to make
    smaller, and every later refusal repeats the same reason."""
    budget = _budget(cap_run=D("0.0555"))
    call = CallKind("review", "cheap", 4096)

    with pytest.raises(BudgetExceeded) as info:
        budget.reserve_first("a", [D("0.0612345")], calls=[call])
    with pytest.raises(BudgetExceeded) as later:
        budget.reserve("b", D("0.001"))

    assert str(info.value) == (
        "run budget cap $0.0555 reached: spent $0.00 + reserved $0.00 + the next call's worst "
        "case $0.061235 (review on cheap, 4096 output tokens) = $0.061235; to go on, raise "
        "--budget-usd to at least $0.061235 (or budget.workday_cap_usd / "
        "budget.overnight_cap_usd), or lower step_max_tokens.review or routes.cheap.max_tokens"
    )
    assert (str(later.value), later.value.earlier) == (str(info.value), True)


def test_day_cap_counts_other_runs_spend_in_the_ledger(tmp_path: Path) -> None:
    """A second run on the same day sees the first run's spend and stops at the day cap."""
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    first = _budget(cap_run=D(10), cap_day=D("1"), ledger=ledger)
    first.settle(first.reserve("a", D("0.8")), D("0.7"))
    second = _budget(cap_run=D(10), cap_day=D("1"), ledger=SqliteLedger(ledger.path))

    with pytest.raises(BudgetExceeded) as info:
        second.reserve("b", D("0.31"))
    assert (info.value.cap_kind, second.spent_day, second.stopped) == ("day", D("0.7"), True)


def test_day_cap_counts_other_runs_live_reservations(tmp_path: Path) -> None:
    """Holds of another live run count toward the day cap until they settle."""
    path = tmp_path / "ledger.sqlite"
    first = _budget(cap_run=D(10), cap_day=D("1"), ledger=SqliteLedger(path))
    first.reserve("a", D("0.6"))
    second = _budget(cap_run=D(10), cap_day=D("1"), ledger=SqliteLedger(path))

    with pytest.raises(BudgetExceeded, match=r"reserved \$0\.6"):
        second.reserve("b", D("0.5"))


def test_a_new_day_starts_from_zero(tmp_path: Path) -> None:
    """Spend is keyed by local date: yesterday's spend does not count today."""
    ledger = SqliteLedger(tmp_path / "ledger.sqlite")
    days = iter([TODAY - dt.timedelta(days=1), TODAY, TODAY])
    budget = Budget(D(10), cap_day=D("1"), ledger=ledger, today=lambda: next(days))
    budget.settle(budget.reserve("a", D("0.9")), D("0.9"))
    budget.reserve("a", D("0.9"))

    assert budget.spent_day == D(0)


def test_resume_carries_earlier_spend_into_run_and_task_caps() -> None:
    """A resumed run's earlier spend counts toward its run and task caps."""
    budget = _budget(cap_task=D("0.5"), spent_run=D("0.7"), spent_tasks={"a": D("0.4")})

    with pytest.raises(BudgetExceeded, match="task 'a'"):
        budget.reserve("a", D("0.2"))
    with pytest.raises(BudgetExceeded, match="run budget"):
        budget.reserve("b", D("0.31"))


def test_no_run_cap_means_only_the_other_caps_apply() -> None:
    """cap_run=None (tests, tools) leaves task and day caps in force."""
    budget = Budget(None, cap_day=D(1), ledger=MemoryLedger())

    with pytest.raises(BudgetExceeded, match="day budget"):
        budget.reserve("a", D(2))


def test_concurrent_reservations_never_cross_the_cap() -> None:
    """Many threads reserving at once are admitted only up to the cap."""
    budget = _budget(cap_run=D("1"))
    admitted: list[Decimal] = []

    def grab() -> None:
        for _ in range(50):
            try:
                admitted.append(budget.reserve("t", D("0.03")).amount)
            except BudgetExceeded:
                return

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (33, D("0.99")) == (len(admitted), budget.reserved_run)


# --- reserve_first: waiting for calls in flight, cheaper fallbacks ------------------------


def _reserve_in_thread(budget: Budget, amounts, keep_waiting=lambda: True):
    """reserve_first on another thread; (thread, outcome list: (index, reservation) or exc)."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(budget.reserve_first("t2", amounts, keep_waiting=keep_waiting))
        except Exception as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_call_that_fits_once_others_settle_waits_instead_of_stopping_the_run() -> None:
    """In-flight reservations are not spend: a call that fits the cap beside what was spent
    waits for them to settle, and the run goes on."""
    budget = _budget(cap_run=D("1"))
    first = budget.reserve("t1", D("0.6"))
    thread, outcome = _reserve_in_thread(budget, [D("0.6")])
    thread.join(0.3)
    waiting = thread.is_alive()
    budget.settle(first, D("0.1"))
    thread.join(5)

    assert waiting
    assert (outcome[0][0], budget.stopped, budget.reserved_run) == (0, False, D("0.6"))


def test_a_call_that_cannot_fit_takes_the_first_cheaper_fallback_that_can() -> None:
    """With $0.50 left, an escalated call's $0.80 cannot fit: its $0.30 fallback is held."""
    budget = _budget(cap_run=D("1"), spent_run=D("0.5"))

    index, held = budget.reserve_first("t1", [D("0.8"), D("0.3")], keep_waiting=lambda: True)

    assert (index, held.amount, budget.stopped) == (1, D("0.3"), False)


def test_after_waiting_a_call_falls_back_when_the_settled_spend_left_too_little() -> None:
    """The preferred $0.60 waits for a call in flight; that one settles at $0.50, so the
    $0.20 fallback is taken rather than stopping the run."""
    budget = _budget(cap_run=D("1"))
    first = budget.reserve("t1", D("0.5"))
    thread, outcome = _reserve_in_thread(budget, [D("0.6"), D("0.2")])
    thread.join(0.3)
    budget.settle(first, D("0.5"))
    thread.join(5)

    assert (outcome[0][0], outcome[0][1].amount, budget.stopped) == (1, D("0.2"), False)


def test_when_no_option_could_ever_fit_the_run_stops_on_the_cheapest() -> None:
    """A refusal names the cheapest option's worst case: the least this call could cost."""
    budget = _budget(cap_run=D("1"), spent_run=D("0.5"))

    with pytest.raises(BudgetExceeded) as refused:
        budget.reserve_first("t1", [D("2"), D("0.6")], keep_waiting=lambda: True)

    assert (refused.value.requested, budget.stopped) == (D("0.6"), True)


def test_a_wait_is_abandoned_once_the_run_stops_and_holds_nothing() -> None:
    """keep_waiting() turning false ends the wait with Abandoned; nothing is held for it."""
    budget = _budget(cap_run=D("1"))
    budget.reserve("t1", D("0.6"))
    stop = threading.Event()
    thread, outcome = _reserve_in_thread(budget, [D("0.6")], keep_waiting=lambda: not stop.is_set())
    stop.set()
    thread.join(5)

    assert isinstance(outcome[0], Abandoned)
    assert budget.reserved_run == D("0.6")


# --- BudgetConfig ------------------------------------------------------------------------


def budget_config(**over: object) -> BudgetConfig:
    """The shipped `budget:` section (data/defaults.yaml) with `over` on top, validated as an
    operator's file would be."""
    text = resources.files("harness.data").joinpath("defaults.yaml").read_text()
    return BudgetConfig.model_validate({**yaml.safe_load(text)["budget"], **over})


def test_config_defaults_are_ten_workday_and_thirty_overnight() -> None:
    """Mon-Fri 08:00-19:00 is the $10 workday; nights and weekends are the $30 overnight."""
    config = budget_config()
    monday = dt.datetime(2026, 11, 23)

    assert [
        config.run_cap(None, monday.replace(hour=10)),
        config.run_cap(None, monday.replace(hour=19)),
        config.run_cap(None, monday.replace(hour=7, minute=59)),
        config.run_cap(None, monday + dt.timedelta(days=5, hours=10)),  # Saturday
    ] == [D(10), D(30), D(30), D(30)]


def test_cli_budget_overrides_the_profile_exactly() -> None:
    """--budget-usd wins over the profile and a float becomes its decimal text."""
    assert budget_config().run_cap(0.1, dt.datetime(2026, 11, 23, 10)) == D("0.1")


def test_config_hours_and_days_are_configurable() -> None:
    """An operator's own workday hours pick the profile."""
    config = budget_config(workday_days=["sat"], workday_start="10:00", workday_end="12:30")

    assert config.profile_at(dt.datetime(2026, 11, 28, 12, 29)) == "workday"


def test_unquoted_yaml_time_is_refused_with_the_fix() -> None:
    """YAML reads 19:00 as 1140; the error says to quote it."""
    with pytest.raises(ValidationError, match="write the time in quotes"):
        budget_config(workday_end=1140)


def test_config_rejects_unknown_keys_and_backwards_hours() -> None:
    """Typos and an end before the start are errors."""
    with pytest.raises(ValidationError, match="daily_cap"):
        budget_config(daily_cap=5)
    with pytest.raises(ValidationError, match="must be before workday_end"):
        budget_config(workday_start="19:00", workday_end="08:00")


def test_from_config_builds_the_caps_and_the_ledger(tmp_path: Path) -> None:
    """from_config takes caps from config, the cap from the profile, and logs them."""
    config = budget_config(task_cap_usd=D(2), daily_cap_usd=D(50), ledger_path=tmp_path / "l.db")
    with capture_logs() as logs:
        budget = Budget.from_config(config, now=dt.datetime(2026, 11, 23, 23))

    assert (
        budget.cap_run,
        budget.cap_task,
        budget.cap_day,
        (tmp_path / "l.db").exists(),
    ) == (D(30), D(2), D(50), True)
    assert [(e["event"], e["profile"], e["run_cap_usd"]) for e in logs] == [
        ("budget_configured", "overnight", "30")
    ]


def test_default_ledger_path_follows_xdg_state_home(monkeypatch, tmp_path: Path) -> None:
    """The ledger lives under $XDG_STATE_HOME/harness by default."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))

    assert tmp_path / "harness" / "spend.sqlite" == budget_config().ledger_path


# --- the SQLite ledger -------------------------------------------------------------------


def test_unwritable_ledger_is_a_ledger_error_saying_what_to_change(tmp_path: Path) -> None:
    """A ledger path that is a folder fails with the path and the setting to change."""
    (tmp_path / "dir.sqlite").mkdir()

    with pytest.raises(LedgerError, match=r"budget\.ledger_path"):
        SqliteLedger(tmp_path / "dir.sqlite")


def test_ledger_stores_exact_decimal_text(tmp_path: Path) -> None:
    """Amounts survive the file exactly: no float rounding."""
    ledger = SqliteLedger(tmp_path / "l.sqlite")
    for n in range(100):
        ledger.hold(TODAY, f"h{n}", D("0.1"), None)
        ledger.settle(TODAY, f"h{n}", D("0.000000000000000001") if n % 2 else D("0.1"))

    assert SqliteLedger(ledger.path).spent(TODAY) == D("5.00000000000000005")


_CHILD = textwrap.dedent(
    """
    import datetime as dt, sys
    from decimal import Decimal
    from harness.budget import SqliteLedger
    ledger = SqliteLedger(sys.argv[1])
    day = dt.date(2026, 11, 23)
    ledger.hold(day, "held-by-dead-process", Decimal("5"), None)
    n = 0
    while True:
        n += 1
        ledger.hold(day, f"c{n}", Decimal("0.01"), None)
        ledger.settle(day, f"c{n}", Decimal("0.01"))
        print(n, flush=True)
    """
)


def test_kill_9_mid_write_leaves_a_valid_ledger_and_charges_dead_holds(tmp_path: Path) -> None:
    """A process killed while writing leaves a consistent file; its holds are charged."""
    path = tmp_path / "l.sqlite"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    while int(child.stdout.readline()) < 30:
        pass
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    acknowledged = int([30, *child.stdout.read().split()][-1])

    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    db.close()
    with capture_logs() as logs:
        totals = SqliteLedger(path).totals(TODAY)
    # settled calls + the $5 hold + at most one call caught between hold and settle
    assert totals.spent - D(5) in (D("0.01") * acknowledged, D("0.01") * (acknowledged + 1))
    assert totals.held == D(0)
    assert [(e["event"], e["log_level"]) for e in logs] == [
        ("ledger_dead_holds_charged", "warning")
    ]


def _damage(path: Path, table: str, value: object) -> None:
    """Store `value` as an amount in a fresh ledger's `table`, as a hand edit or bad disk might."""
    SqliteLedger(path).close()
    db = sqlite3.connect(path)
    if table == "days":
        db.execute("INSERT INTO days (day, spent_usd) VALUES (?, ?)", (TODAY.isoformat(), value))
    else:  # a hold of a process that is gone (pid 0 is never a live process of ours)
        db.execute("INSERT INTO holds VALUES ('h0', ?, ?, ?)", (TODAY.isoformat(), 0, value))
    db.commit()
    db.close()


DAMAGED = ["-1000", "-0.01", "NaN", "sNaN", "-Infinity", "Infinity", "abc", "", "0x10", b"\x00"]


@pytest.mark.parametrize("table", ["days", "holds"])
@pytest.mark.parametrize("value", DAMAGED, ids=repr)
def test_a_damaged_ledger_row_is_refused_with_the_row_and_the_fix(
    tmp_path: Path, table: str, value: object
) -> None:
    """A negative, infinite or unreadable amount would lift or break the day cap: refused."""
    path = tmp_path / "l.sqlite"
    _damage(path, table, value)

    with pytest.raises(LedgerError) as caught:
        SqliteLedger(path)

    message = str(caught.value)
    assert (
        f"spend ledger {path} is damaged" in message,
        f"{table} row" in message,
        "restore the file from a backup, or correct the row" in message,
    ) == (True, True, True), message


@pytest.mark.parametrize("value", ["-1000", "NaN", "abc"])
def test_a_ledger_damaged_after_opening_refuses_every_hold(tmp_path: Path, value: str) -> None:
    """Damage written by another process mid-run: holds fail as LedgerError, never accepted."""
    path = tmp_path / "l.sqlite"
    ledger = SqliteLedger(path)
    db = sqlite3.connect(path)
    db.execute("INSERT INTO days (day, spent_usd) VALUES (?, ?)", (TODAY.isoformat(), value))
    db.commit()
    db.close()

    with pytest.raises(LedgerError, match="is damaged"):
        ledger.hold(TODAY, "h1", D(1), D(10))
