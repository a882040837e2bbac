"""The budget every worker of a distributed night shares: scoped caps in PostgreSQL.

A scope is a named cap ("day:2026-11-25", "run:<id>", "task:<id>/<task>"). A hold is taken on
every scope it names or on none, in one transaction that first locks those scopes' rows in
name order (`SELECT ... ORDER BY name FOR UPDATE`): two holders lock in the same order, so they
queue and never deadlock, and a scope's spend plus its holds is never seen above its cap.
Each process is a holder with a lease it renews; a holder whose lease expired is dead (a
killed worker, a partitioned machine), and its holds are charged in full to every scope they
were on, once: its calls may have been billed. Amounts are NUMERIC, exact as Decimal.

Needs the `scale` extra (psycopg); nothing on one machine imports this module.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TypeVar

import psycopg
import structlog

from harness.budget.ledger import DayTotals, LedgerError

__all__ = [
    "Scope",
    "Session",
    "SharedDayLedger",
    "SharedLedger",
    "connect",
    "open_shared_ledger",
    "unreachable",
]

log = structlog.get_logger("harness.budget")
T = TypeVar("T")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS scopes ("
    " name TEXT PRIMARY KEY, spent_usd NUMERIC NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS holders (id TEXT PRIMARY KEY, lease_until TIMESTAMPTZ NOT NULL)",
    "CREATE TABLE IF NOT EXISTS holds ("
    " id TEXT NOT NULL, scope TEXT NOT NULL REFERENCES scopes(name),"
    " holder TEXT NOT NULL, usd NUMERIC NOT NULL, PRIMARY KEY (id, scope))",
)


@dataclass(frozen=True)
class Scope:
    """One capped total: its name and its cap (None: counted, never refused)."""

    name: str
    cap: Decimal | None


@dataclass(frozen=True)
class Refused:
    """The scope a hold did not fit, with what it held when it was refused."""

    scope: Scope
    spent: Decimal
    held: Decimal


# A worker lost to a power cut or a partition holds its advisory locks (the gate, its slots)
# until PostgreSQL sees its session die: TCP keepalives make that about 25 s, not the
# kernel's default two hours.
_KEEPALIVE = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}


def connect(url: str) -> psycopg.Connection:
    """An autocommit connection to `scale.database` whose session dies with a lost peer."""
    return psycopg.connect(url, autocommit=True, **_KEEPALIVE)


# A database that cannot be reached is asked again after 0.2 s, backing off to 5 s.
_OUTAGE_WAIT_S = (0.2, 5.0)


class Session:
    """One connection to `scale.database` that outlives an outage of the server: `run(fn)`
    calls `fn(connection)`, and while the server cannot be reached (refused, restarted, a
    session it terminated) reconnects and calls it again, backing off, for up to
    `patience_s` of unbroken outage; then the outage is the caller's (LedgerError, naming
    it). `fn` must be safe to run again after a failure. Whatever the server held for the
    lost session (advisory locks) went with it: `on_reconnect` lets the owner forget it."""

    def __init__(
        self,
        url: str,
        what: str,
        *,
        patience_s: float = 0.0,
        on_reconnect: Callable[[], None] | None = None,
    ) -> None:
        self._url, self._what, self._patience = url, what, patience_s
        self._on_reconnect = on_reconnect
        self._db: psycopg.Connection | None = None
        self.run(lambda db: None)  # connect now: a wrong URL is refused at start

    def run(self, fn: Callable[[psycopg.Connection], T]) -> T:
        since, wait = None, _OUTAGE_WAIT_S[0]
        while True:
            try:
                if self._db is None or self._db.closed:
                    fresh = self._db is not None
                    self._db = connect(self._url)
                    if fresh and self._on_reconnect is not None:
                        self._on_reconnect()
                return fn(self._db)
            except psycopg.OperationalError as exc:
                if not _outage(exc):  # refused credentials, no such database: the URL's
                    raise LedgerError(self._explain(exc)) from exc
                now = time.monotonic()
                since = now if since is None else since
                if now - since >= self._patience:
                    raise LedgerError(self._explain(exc, now - since)) from exc
                log.warning("database_unreachable", what=self._what, error=scrub_url(str(exc)))
                if self._db is not None:
                    self._db.close()
                time.sleep(wait)
                wait = min(wait * 2, _OUTAGE_WAIT_S[1])
            except psycopg.Error as exc:
                raise LedgerError(self._explain(exc)) from exc

    def close(self) -> None:
        if self._db is not None:
            self._db.close()

    def _explain(self, exc: Exception, waited: float | None = None) -> str:
        text = f"{self._what} (scale.database): {exc}"
        if waited:
            return f"{text}; unreachable for {waited:.0f} s (scale.patience_s)"
        return f"{text}; check the URL and the server"


def _outage(exc: psycopg.OperationalError) -> bool:
    """A server that is down, restarting or cut off (no SQLSTATE: no answer at all; class 08,
    the connection; class 57, an operator's shutdown or a server still starting), not one
    that answered no (wrong password, no such database)."""
    state = exc.sqlstate
    return state is None or state.startswith(("08", "57"))


def unreachable(exc: BaseException) -> bool:
    """Whether `exc`, or an exception it was raised from, is a database that could not be
    reached (an outage, not a wrong input)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, psycopg.OperationalError) and _outage(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def scrub_url(text: str) -> str:
    """An error's text without a password psycopg may quote from the URL."""
    return re.sub(r"(password=)\S+", r"\1***", text)


class SharedLedger:
    """Scoped holds in PostgreSQL for one holder (a process) with a lease of `lease_s`."""

    def __init__(
        self, url: str, holder: str, *, lease_s: float = 60.0, patience_s: float = 0.0
    ) -> None:
        self.holder, self._lease = holder, dt.timedelta(seconds=lease_s)
        self._one = threading.Lock()  # one transaction at a time on the one connection
        self._closed = threading.Event()
        self._db = Session(url, "shared budget ledger", patience_s=patience_s)

        def schema(db: psycopg.Connection) -> None:
            db.execute("SELECT pg_advisory_xact_lock(7240)")  # one schema creator at a time
            for statement in _SCHEMA:
                db.execute(statement)

        self._transaction(schema)
        self.renew()

    def keep_alive(self) -> None:
        """Renew the lease from a daemon thread every quarter lease until `close`: a call
        that runs for minutes keeps its hold, and a killed process stops renewing."""

        def renew() -> None:
            while not self._closed.wait(self._lease.total_seconds() / 4):
                try:
                    self.renew()
                except LedgerError as exc:  # the next hold reports it; keep trying until then
                    log.warning("ledger_lease_not_renewed", error=str(exc))

        threading.Thread(target=renew, name="ledger-lease", daemon=True).start()

    def renew(self) -> None:
        """Extend this holder's lease from the database's clock (call well within lease_s)."""

        def renew(db: psycopg.Connection) -> None:
            db.execute(
                "INSERT INTO holders (id, lease_until) VALUES (%s, now() + %s) "
                "ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until",
                (self.holder, self._lease),
            )

        self._transaction(renew)

    def hold(self, hold_id: str, amount: Decimal, scopes: Sequence[Scope]) -> Refused | None:
        """Hold `amount` on every scope, or on none: None when held, else the refusal."""
        self.reap()
        ordered = sorted(scopes, key=lambda s: s.name)

        def hold(db: psycopg.Connection) -> Refused | None:
            self._still_alive(db)
            if self._scopes_of(db, hold_id):  # a try whose commit the outage hid: held
                return None
            totals = self._lock(db, [s.name for s in ordered])
            for scope in ordered:
                spent, held = totals[scope.name]
                if scope.cap is not None and spent + held + amount > scope.cap:
                    return Refused(scope, spent, held)
            with db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO holds (id, scope, holder, usd) VALUES (%s, %s, %s, %s)",
                    [(hold_id, s.name, self.holder, amount) for s in ordered],
                )
            return None

        return self._transaction(hold)

    def settle(self, hold_id: str, actual: Decimal) -> None:
        """Replace the hold by what the call cost, on every scope it was on (once: a settle
        tried again after an outage finds the hold gone and charges nothing more)."""

        def settle(db: psycopg.Connection) -> None:
            names = self._scopes_of(db, hold_id)
            self._lock(db, names)
            db.execute("DELETE FROM holds WHERE id = %s", (hold_id,))
            db.execute(
                "UPDATE scopes SET spent_usd = spent_usd + %s WHERE name = ANY(%s)",
                (actual, names),
            )

        self._transaction(settle)

    def release(self, hold_id: str) -> None:
        """Drop a hold whose call was never billed."""

        def release(db: psycopg.Connection) -> None:
            self._lock(db, self._scopes_of(db, hold_id))
            db.execute("DELETE FROM holds WHERE id = %s", (hold_id,))

        self._transaction(release)

    def totals(self, name: str) -> tuple[Decimal, Decimal]:
        """(spent, held) of one scope now."""
        return self._transaction(lambda db: self._lock(db, [name])[name])

    def reap(self) -> Decimal:
        """Charge in full, once, the holds of every holder whose lease expired; the total."""

        def reap(db: psycopg.Connection) -> tuple[list[str], list[tuple[str, Decimal]]]:
            dead = [
                r[0]
                for r in db.execute(
                    "SELECT id FROM holders WHERE lease_until < now() ORDER BY id FOR UPDATE"
                )
            ]
            if not dead:
                return [], []
            names = [
                r[0]
                for r in db.execute(
                    "SELECT DISTINCT scope FROM holds WHERE holder = ANY(%s)", (dead,)
                )
            ]
            self._lock(db, names)
            rows = db.execute(
                "DELETE FROM holds WHERE holder = ANY(%s) RETURNING scope, usd", (dead,)
            ).fetchall()
            for scope, usd in rows:
                db.execute(
                    "UPDATE scopes SET spent_usd = spent_usd + %s WHERE name = %s", (usd, scope)
                )
            db.execute("DELETE FROM holders WHERE id = ANY(%s)", (dead,))
            return dead, rows

        dead, rows = self._transaction(reap)
        charged = sum((Decimal(usd) for _, usd in rows), Decimal(0))
        if rows:
            log.warning("ledger_dead_holds_charged", holders=dead, charged_usd=str(charged))
        return charged

    def close(self) -> None:
        """Give up the lease at once (a clean exit) and close the connection."""
        self._closed.set()

        def leave(db: psycopg.Connection) -> None:
            db.execute(
                "DELETE FROM holders WHERE id = %s AND NOT EXISTS "
                "(SELECT 1 FROM holds WHERE holder = %s)",
                (self.holder, self.holder),
            )

        self._transaction(leave)
        self._db.close()

    def _still_alive(self, db: psycopg.Connection) -> None:
        """Renew the lease, unless it lapsed: a holder found dead had its holds charged in
        full, and a hold it took now would belong to no live holder and never be charged."""
        renewed = db.execute(
            "UPDATE holders SET lease_until = now() + %s WHERE id = %s AND lease_until >= now()",
            (self._lease, self.holder),
        ).rowcount
        if renewed == 0:
            raise LedgerError(
                f"shared budget ledger (scale.database): the lease of {self.holder} lapsed and "
                "its holds were charged in full; this process may not hold again"
            )

    def _lock(self, db: psycopg.Connection, names: list[str]) -> dict[str, tuple[Decimal, Decimal]]:
        """Create missing scopes, lock them in name order: {name: (spent, held)}."""
        names = sorted(set(names))
        with db.cursor() as cur:
            cur.executemany(
                "INSERT INTO scopes (name) VALUES (%s) ON CONFLICT DO NOTHING",
                [(n,) for n in names],
            )
        spent = dict(
            db.execute(
                "SELECT name, spent_usd FROM scopes WHERE name = ANY(%s) ORDER BY name FOR UPDATE",
                (names,),
            ).fetchall()
        )
        held = dict(
            db.execute(
                "SELECT scope, sum(usd) FROM holds WHERE scope = ANY(%s) GROUP BY scope", (names,)
            ).fetchall()
        )
        return {n: (Decimal(spent[n]), Decimal(held.get(n, 0))) for n in names}

    @staticmethod
    def _scopes_of(db: psycopg.Connection, hold_id: str) -> list[str]:
        rows = db.execute("SELECT scope FROM holds WHERE id = %s", (hold_id,)).fetchall()
        return [r[0] for r in rows]

    def _transaction(self, body: Callable[[psycopg.Connection], T]) -> T:
        """`body` in one transaction, one at a time; run again after an outage (Session)."""

        def once(db: psycopg.Connection) -> T:
            with db.transaction():
                return body(db)

        with self._one:
            return self._db.run(once)


class SharedDayLedger:
    """The `Ledger` a run's Budget uses when `scale.database` is set: every hold is taken on
    the run's scope (on Temporal, the night's: one run cap for every worker) and, for paid
    calls (`day`), on the day's scope, which every night on that database shares, local or
    distributed. Simulated and replayed spend never enters the day (`day` false)."""

    def __init__(self, shared: SharedLedger, run: Scope, *, day: bool) -> None:
        self._shared, self._run, self._day = shared, run, day

    def hold(
        self, day: dt.date, hold_id: str, amount: Decimal, cap: Decimal | None
    ) -> tuple[bool, DayTotals]:
        scopes = [self._run, *self._day_scope(day, cap)]
        refused = self._shared.hold(hold_id, amount, scopes)
        if refused is None:
            return True, DayTotals(Decimal(0), Decimal(0))
        scope = "run" if refused.scope == self._run else "day"
        return False, DayTotals(refused.spent, refused.held, scope, refused.scope.cap)

    def settle(self, day: dt.date, hold_id: str, actual: Decimal) -> None:
        self._shared.settle(hold_id, actual)

    def release(self, hold_id: str) -> None:
        self._shared.release(hold_id)

    def spent(self, day: dt.date) -> Decimal:
        return self._shared.totals(_day_name(day))[0] if self._day else Decimal(0)

    def headroom(self, day: dt.date, cap: Decimal | None) -> Decimal | None:
        rooms = [
            s.cap - self._shared.totals(s.name)[0]
            for s in (self._run, *self._day_scope(day, cap))
            if s.cap is not None
        ]
        return min(rooms, default=None)

    def close(self) -> None:
        self._shared.close()

    def _day_scope(self, day: dt.date, cap: Decimal | None) -> list[Scope]:
        return [Scope(_day_name(day), cap)] if self._day else []


def _day_name(day: dt.date) -> str:
    return f"day:{day.isoformat()}"


def open_shared_ledger(
    url: str, run: Scope, *, day: bool, patience_s: float = 0.0
) -> SharedDayLedger:
    """The run's ledger on `scale.database`, its lease kept alive by this process; one holder
    per process (host, pid and a nonce: a pid reused after a restart is a new holder). An
    outage of the database is waited out for up to `patience_s` (`scale.patience_s`)."""
    holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    shared = SharedLedger(url, holder, patience_s=patience_s)
    shared.keep_alive()
    return SharedDayLedger(shared, run, day=day)
