"""The shared ledger across processes: all-or-none scoped holds, expired leases charged once."""

from __future__ import annotations

import datetime as dt
import itertools
import multiprocessing
import os
import queue
import shutil
import signal
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

psycopg = pytest.importorskip("psycopg", reason="needs the scale extra (psycopg[binary])")
pgserver = pytest.importorskip("pgserver", reason="needs the scale-test extra (pgserver)")

from harness.budget import Budget, BudgetExceeded, LedgerError  # noqa: E402
from harness.budget.shared import Scope, SharedDayLedger, SharedLedger  # noqa: E402

PROCESSES = 8
LOCAL_NIGHTS = 2  # the last processes are local nights: a Budget on the shared day
DAY = dt.date(2026, 11, 25)
SCOPES = (f"day:{DAY.isoformat()}", "run:r", "task:r/a", "task:r/b")
_databases = itertools.count()


@pytest.fixture(scope="module")
def postgres():
    """One embedded PostgreSQL for the module; each example gets a database of its own."""
    # Not under pytest's basetemp: that is 0700, and pgserver run by root serves the data as
    # its own `pgserver` user, which must be able to reach the folder.
    where = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    where.chmod(0o755)
    server = pgserver.get_server(where / "data", cleanup_mode="stop")
    yield server
    server.cleanup()
    shutil.rmtree(where, ignore_errors=True)


def _fresh_database(server) -> str:
    name = f"ledger{os.getpid()}_{next(_databases)}"
    with psycopg.connect(server.get_uri(), autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return server.get_uri(name)


def _scopes(caps: dict[str, Decimal | None], task: str) -> list[Scope]:
    return [Scope(n, caps[n]) for n in (SCOPES[0], "run:r", f"task:r/{task}")]


def _local_night(url, caps, holder, ops, out) -> None:
    """One process as a local night with scale.database: its Budget holds on the shared day
    scope (its cap the day's) and on a run scope of its own."""
    run = Scope(f"run:{holder}", None)
    ledger = SharedDayLedger(SharedLedger(url, holder, lease_s=600.0), run, day=True)
    budget = Budget(None, cap_day=caps[SCOPES[0]], ledger=ledger, today=lambda: DAY)
    for cents, task, settle_pct in ops:
        amount = Decimal(cents) / 100
        try:
            reservation = budget.reserve(task, amount)
        except BudgetExceeded:
            continue
        if settle_pct is None:
            budget.release(reservation)
        else:
            actual = (amount * settle_pct / 100).quantize(Decimal("0.0001"))
            budget.settle(reservation, actual)
            out.put(("settled", [SCOPES[0], run.name], actual))
    out.put(("done", holder, []))
    ledger.close()


def _worker(url, caps, holder, ops, dies, out) -> None:
    """One process: hold, then settle or release each op; a dying one keeps its holds."""
    ledger = SharedLedger(url, holder, lease_s=1.0 if dies else 600.0)
    kept = []
    for n, (cents, task, settle_pct) in enumerate(ops):
        amount, scopes = Decimal(cents) / 100, _scopes(caps, task)
        try:
            if ledger.hold(f"{holder}-{n}", amount, scopes) is not None:
                continue
        except LedgerError:  # a dying holder slow enough to be found dead holds no more
            assert dies
            break
        if dies:
            kept.append(([s.name for s in scopes], amount))
        elif settle_pct is None:
            ledger.release(f"{holder}-{n}")
        else:
            actual = (amount * settle_pct / 100).quantize(Decimal("0.0001"))
            ledger.settle(f"{holder}-{n}", actual)
            out.put(("settled", [s.name for s in scopes], actual))
    out.put(("held" if dies else "done", holder, kept))
    if dies:
        time.sleep(3600)  # killed here by the test, holds still open
    ledger.close()


def _over_cap(url, caps) -> list[str]:
    """Scopes whose spend plus holds exceed their cap, in one consistent snapshot."""
    with psycopg.connect(url) as db:
        db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        spent = dict(db.execute("SELECT name, spent_usd FROM scopes").fetchall())
        held = dict(db.execute("SELECT scope, sum(usd) FROM holds GROUP BY scope").fetchall())
    return [
        n for n, cap in caps.items() if cap is not None and spent.get(n, 0) + held.get(n, 0) > cap
    ]


def _holders(url, names) -> int:
    with psycopg.connect(url) as db:
        return db.execute("SELECT count(*) FROM holders WHERE id = ANY(%s)", (names,)).fetchone()[0]


cents = st.integers(min_value=1, max_value=400)
op = st.tuples(cents, st.sampled_from("ab"), st.one_of(st.none(), st.integers(0, 100)))
plan = st.lists(st.lists(op, min_size=1, max_size=6), min_size=PROCESSES, max_size=PROCESSES)
cap = st.one_of(st.none(), st.integers(0, 3000).map(lambda c: Decimal(c) / 100))


@pytest.mark.slow
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(plan=plan, caps=st.fixed_dictionaries({n: cap for n in SCOPES}), killed=st.integers(1, 3))
def test_no_scope_over_its_cap_and_dead_holds_charged_once(postgres, plan, caps, killed):
    """Eight processes hold and settle at random on PostgreSQL, six as a night's shards and
    two as local nights sharing its day: no scope is ever seen over its cap, and once the
    killed ones' leases expire their holds are charged in full, once."""
    url = _fresh_database(postgres)
    SharedLedger(url, "setup").close()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    shards = PROCESSES - LOCAL_NIGHTS
    procs = [
        ctx.Process(target=_worker, args=(url, caps, f"p{i}", ops, i < killed, out))
        if i < shards
        else ctx.Process(target=_local_night, args=(url, caps, f"p{i}", ops, out))
        for i, ops in enumerate(plan)
    ]
    for p in procs:
        p.start()
    settled, kept, reported, over = [], [], 0, []
    while reported < PROCESSES:  # snapshot the caps as often as the processes let us
        over += _over_cap(url, caps)
        try:
            message = out.get(timeout=0.05)
        except queue.Empty:
            continue
        if message[0] == "settled":
            settled.append(message[1:])
        else:
            reported += 1
            kept += message[2]
    for p in procs[:killed]:
        os.kill(p.pid, signal.SIGKILL)
    for p in procs:
        p.join()
    observer = SharedLedger(url, "observer")
    while _holders(url, [f"p{i}" for i in range(killed)]):
        time.sleep(0.2)  # until the killed holders' one-second leases expire (db clock)
        observer.reap()
    names = (*SCOPES, *(f"run:p{i}" for i in range(shards, PROCESSES)))
    expected = dict.fromkeys(names, Decimal(0))
    for scopes, amount in settled + kept:
        for name in scopes:
            expected[name] += amount

    assert over == []
    assert {n: observer.totals(n) for n in names} == {n: (expected[n], 0) for n in names}
    assert _over_cap(url, caps) == []


def test_a_hold_is_taken_on_every_scope_or_on_none(postgres) -> None:
    """A hold that one scope refuses leaves nothing held on the others."""
    ledger = SharedLedger(_fresh_database(postgres), "one")
    scopes = [Scope("day:d", Decimal(10)), Scope("run:r", Decimal(1))]

    refused = ledger.hold("h", Decimal(2), scopes)

    assert refused is not None and refused.scope.name == "run:r"
    assert [ledger.totals(s.name) for s in scopes] == [(0, 0), (0, 0)]
