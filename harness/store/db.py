"""The run store's SQLite connection: WAL, fsync at every commit, one lock, migrations.

Durability: every write is its own short transaction, committed before the method returns,
so a SIGKILL at any moment loses at most the write in progress, never a finished one.
`synchronous=FULL` fsyncs the WAL at every commit, so even a power cut keeps what was
committed; NORMAL would survive a SIGKILL too but may roll back the last commits on power
loss, and a lost call row means spend the budget no longer sees.

One exception, `tx(durable=False)`: a call's settle (close_call) commits without its own
fsync (~5 ms here). Its frames sit in the WAL behind the open_call's synced ones, and the
next synced commit (the next call's open_call, the attempt's record) fsyncs them too: the
settle rides on that commit, so each call costs one fsync, not two. A SIGKILL loses nothing
(the WAL is in the OS's cache); a power cut may lose the settles since the last synced
commit, and a lost settle leaves its row in flight, counted at its reservation, which is
never less than the bill: spend is over-counted, never under. Resume then buys that reply
again (at most one call per slot in flight at the cut).

Threads: one connection guarded by one lock; every statement runs under it, so the store is
safe to share across a worker pool.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.keys import scrub
from harness.store.schema import MIGRATIONS

__all__ = ["Db", "StoreError"]


class StoreError(RuntimeError):
    """The store cannot be used (newer schema, no WAL on this filesystem)."""


class Db:
    """One SQLite file opened for the run store. Open with `Db.open(path)`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path) -> Db:
        """Open (creating and migrating as needed) the database at `path`."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            conn.close()
            raise StoreError(f"{path}: SQLite WAL mode unavailable here ({mode}); use a local disk")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        db = cls(conn)
        db._migrate(path)
        return db

    @classmethod
    def open_readonly(cls, path: Path) -> Db:
        """Open an existing store to read only (SQLite's mode=ro): no migration, no write
        transaction, so a reader never waits on a night writing it nor makes it wait, and the
        file's bytes stay as they are. A store an older harness left (no night of this one
        has opened it) is first migrated once, as before."""
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{path}: not a readable run store: {exc}") from exc
        if version > len(MIGRATIONS):
            conn.close()
            raise StoreError(f"{path}: schema {version} is newer than this harness")
        if version < len(MIGRATIONS):
            conn.close()
            cls.open(path).close()
            return cls.open_readonly(path)
        return cls(conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def tx(self, *, durable: bool = True) -> Iterator[_Scrubbing]:
        """One short write transaction, committed before returning: fsynced, unless not
        `durable` (then it is synced by the next durable commit; see the module doc)."""
        with self._lock:
            if not durable:  # a pragma, so set outside the transaction, and reset after it
                self._conn.execute("PRAGMA synchronous=NORMAL")
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield _Scrubbing(self._conn)
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            finally:
                if not durable:
                    self._conn.execute("PRAGMA synchronous=FULL")

    def insert(self, verb: str, table: str, row: tuple[Any, ...]) -> None:
        with self.tx() as conn:
            conn.execute(f"{verb} INTO {table} VALUES ({','.join('?' * len(row))})", row)

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def columns(self, table: str) -> list[str]:
        """The table's column names, in their order."""
        return [row[1] for row in self.read(f"PRAGMA table_info({table})")]

    def _migrate(self, path: Path) -> None:
        """Apply missing migrations, each in its own transaction that re-reads the version
        under the write lock, so two processes opening one store cannot both apply it."""
        while True:
            with self.tx() as conn:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > len(MIGRATIONS):
                    raise StoreError(f"{path}: schema {version} is newer than this harness")
                if version == len(MIGRATIONS):
                    return
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version={version + 1}")


class _Scrubbing:
    """The connection as a transaction sees it: every text parameter is scrubbed of secrets
    (harness.keys) before SQLite stores it, so no write to the run store can carry a key."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, _scrubbed(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        return self._conn.executemany(sql, (_scrubbed(row) for row in rows))


def _scrubbed(params: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(scrub(p) if isinstance(p, str) else p for p in params)
