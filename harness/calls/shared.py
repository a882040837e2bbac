"""The credential gates and the halt of a night whose tasks run in many processes (a Temporal
night's shards), kept in `scale.database` so they hold across workers (docs/scale.md).

- Until a provider is proven, a request to it holds a PostgreSQL advisory lock named by the
  night and the provider: one request at a time across every worker. A worker that dies
  mid-request loses its session and with it the lock.
- A refused key is written to the `halts` table before the lock is let go; every process
  of the night reads that table before each reservation, so the refusal reaches the vendor
  once and no other request follows it.
- A provider's `concurrency.providers` limit is the night's: each request also holds one of
  that many advisory locks named by the night, the provider and a slot number, so no more
  requests than the limit are in flight across every worker. A worker that dies loses its
  session and its slots with it.

Needs the `scale` extra (psycopg); nothing on one machine imports this module.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import psycopg
import structlog

from harness.budget import LedgerError
from harness.budget.shared import Session, connect
from harness.calls.gate import DEFAULT_SLOTS
from harness.keys import scrub
from harness.llm import AuthenticationError, ErrorKind

__all__ = ["SharedGates", "clear_halt"]

log = structlog.get_logger()

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS proven (night TEXT, provider TEXT, PRIMARY KEY (night, provider))",
    "CREATE TABLE IF NOT EXISTS halts (night TEXT PRIMARY KEY, provider TEXT NOT NULL,"
    " kind TEXT NOT NULL, status INTEGER, message TEXT NOT NULL)",
)
_LOCK_CLASS = 7241  # advisory lock keys (7241, hashtext(night/provider)); 7240 is the ledger's
_SLOT_CLASS = 7242  # (7242, hashtext(night/provider/slot number))
_SLOT_WAIT_S = (0.02, 0.5)  # a request waiting for a free slot asks again after 20 ms .. 0.5 s


class SharedGates:
    """The `Gates` of one process of a distributed night named `night`."""

    def __init__(
        self,
        url: str,
        night: str,
        limits: Mapping[str, int] | None = None,
        *,
        patience_s: float = 0.0,
    ) -> None:
        self._night = night
        self._limits = dict(limits or {})
        self._held: set[str] = set()  # slots this process holds (one session: locks re-enter)
        self._slot_lock = threading.Lock()  # one statement at a time on the slots connection
        self._state_lock = threading.Lock()  # one statement at a time on the state connection
        self._local: dict[str, threading.Lock] = {}  # this process's threads queue here first
        self._proven: set[str] = set()
        # Each connection outlives an outage of the database for up to `patience_s`
        # (budget/shared.py, Session); the locks a lost session held went with it.
        what = "shared gates"
        self._state = Session(url, what, patience_s=patience_s)
        self._gate = Session(url, what, patience_s=patience_s)  # holds the advisory locks
        self._slots = Session(url, what, patience_s=patience_s, on_reconnect=self._held.clear)

        def schema(db: psycopg.Connection) -> None:
            with db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(7240)")
                for statement in _SCHEMA:
                    db.execute(statement)

        self._state.run(schema)

    @contextmanager
    def passage(self, provider: str) -> Iterator[None]:
        if provider in self._proven:
            yield
            return
        with self._local_lock(provider):
            if provider in self._proven:  # proven while this thread queued
                yield
                return
            key = f"{self._night}/{provider}"
            self._gate.run(
                lambda db: db.execute(
                    "SELECT pg_advisory_lock(%s, hashtext(%s))", (_LOCK_CLASS, key)
                )
            )
            try:
                if self._is_proven(provider):
                    self._proven.add(provider)
                yield
            finally:
                try:  # a session lost meanwhile let the lock go with it
                    self._gate.run(
                        lambda db: db.execute(
                            "SELECT pg_advisory_unlock(%s, hashtext(%s))", (_LOCK_CLASS, key)
                        )
                    )
                except LedgerError as exc:
                    log.warning("gate_release_failed", gate=key, error=scrub(str(exc)))

    @contextmanager
    def slot(self, provider: str, stopping: Callable[[], bool]) -> Iterator[None]:
        """One of the night's slots for `provider`, waiting (polling, backing off) while every
        one is held somewhere in the cluster, or until `stopping()` (then without one: the
        caller sends nothing, see Gates.slot)."""
        wait = _SLOT_WAIT_S[0]
        while (key := self._take_slot(provider)) is None:
            if stopping():
                yield
                return
            time.sleep(wait)
            wait = min(wait * 2, _SLOT_WAIT_S[1])
        try:
            yield
        finally:
            self._let_go(key)

    def _let_go(self, key: str) -> None:
        """Release a slot. A failure here must not replace the request's own outcome: the
        slot then goes with this process's session (logged)."""
        with self._slot_lock:
            try:
                self._slots.run(
                    lambda db: db.execute(
                        "SELECT pg_advisory_unlock(%s, hashtext(%s))", (_SLOT_CLASS, key)
                    )
                )
            except LedgerError as exc:
                log.warning("slot_release_failed", slot=key, error=scrub(str(exc)))
            finally:
                self._held.discard(key)

    def _take_slot(self, provider: str) -> str | None:
        """A free slot's key, now held by this process; None when all are taken."""
        with self._slot_lock:
            for n in range(self._limits.get(provider, DEFAULT_SLOTS)):
                key = f"{self._night}/{provider}/{n}"
                if key in self._held:  # this session's own lock would be granted again
                    continue
                row = self._slots.run(
                    lambda db, key=key: db.execute(
                        "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (_SLOT_CLASS, key)
                    ).fetchone()
                )
                if row and row[0]:
                    self._held.add(key)
                    return key
        return None

    def prove(self, provider: str) -> None:
        if provider in self._proven:
            return
        self._write(
            "INSERT INTO proven (night, provider) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (self._night, provider),
        )
        self._proven.add(provider)

    def halt(self, refusal: AuthenticationError) -> None:
        message = scrub(refusal.message)
        self._write(
            "INSERT INTO halts (night, provider, kind, status, message) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (self._night, refusal.provider, refusal.kind.value, refusal.status, message),
        )

    def halted(self) -> AuthenticationError | None:
        row = self._read(
            "SELECT provider, kind, status, message FROM halts WHERE night = %s", (self._night,)
        )
        if row is None:
            return None
        provider, kind, status, message = row
        return AuthenticationError(ErrorKind(kind), message, status=status, provider=provider)

    def close(self) -> None:
        self._state.close()
        self._gate.close()
        self._slots.close()

    def _is_proven(self, provider: str) -> bool:
        query = "SELECT 1 FROM proven WHERE night = %s AND provider = %s"
        return self._read(query, (self._night, provider)) is not None

    def _write(self, query: str, params: tuple) -> None:
        with self._state_lock:
            self._state.run(lambda db: db.execute(query, params))

    def _read(self, query: str, params: tuple) -> tuple | None:
        with self._state_lock:
            return self._state.run(lambda db: db.execute(query, params).fetchone())

    def _local_lock(self, provider: str) -> threading.Lock:
        with self._state_lock:
            return self._local.setdefault(provider, threading.Lock())


def clear_halt(url: str, night: str) -> bool:
    """Forget the refusal that halted `night` (a resume after the key was fixed: the halt
    would otherwise stop every task again before its first request); whether there was one.
    Only while no process of the night runs: `harness run --resume` calls it before the
    night's workflow starts again."""
    try:
        with connect(url) as db:
            with db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(7240)")  # one schema creator at a time
                for statement in _SCHEMA:
                    db.execute(statement)
            return db.execute("DELETE FROM halts WHERE night = %s", (night,)).rowcount > 0
    except psycopg.Error as exc:
        raise LedgerError(f"shared gates (scale.database): {exc}; check the URL") from exc
