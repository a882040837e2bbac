"""A call's two store commits: the open synced before the request goes, the settle riding on
the next synced commit. Crash-safe under SIGKILL; never under-counts spend."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.store import Store
from harness.store.db import Db

_CALLER = textwrap.dedent(
    """
    import sys, datetime as dt
    from decimal import Decimal
    from harness.llm import CallRequest, Completion, Prompt, Route, StopReason, Usage
    from harness.store import RunParams, Store

    store = Store.open(sys.argv[1])
    store.begin_run("r1", dt.datetime.now(dt.UTC), "sim", None, RunParams())
    route = Route("mid", "sim", "sim-mid", 1000)
    for n in range(1, 100000):
        request = CallRequest(route, Prompt("s", "st", f"v{n}"), "orders", "fix", n)
        handle = store.open_call("r1", request, Decimal(1))
        if n % 2:  # odd calls settle; even ones are left in flight at the kill
            reply = Completion(f"reply {n}", Usage(10, 0, 0, 5), StopReason.END, "sim-mid", "sim")
            store.close_call(handle, reply, Decimal("0.25"))
        print(n, flush=True)
    """
)


@pytest.mark.parametrize("kill_after", [1, 2, 25])
def test_sigkill_keeps_every_settle_and_counts_open_calls_at_their_reservation(
    tmp_path: Path, kill_after: int
) -> None:
    """After a kill -9, every acknowledged settle is there with its reply, every open call
    counts at its reservation, and the file is intact."""
    db = tmp_path / "h.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", _CALLER, str(db)], stdout=subprocess.PIPE, text=True
    )
    acknowledged = [int(proc.stdout.readline()) for _ in range(kill_after)]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    store = Store.open(db)
    rows = store._db.read(
        "SELECT attempt, cost_usd, reply FROM calls WHERE run_id='r1' ORDER BY attempt"
    )
    integrity = sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0]
    store.close()

    settled = {n: (c, r) for n, c, r in rows if n in acknowledged and n % 2}
    in_flight = {n: c for n, c, r in rows if n in acknowledged and not n % 2}
    assert integrity == "ok"
    assert settled == {n: ("0.25", f"reply {n}") for n in acknowledged if n % 2}
    assert in_flight == {n: "1" for n in acknowledged if not n % 2}


def test_an_unsynced_commit_leaves_the_connection_synced_again(tmp_path: Path) -> None:
    """After a settle's commit, and after one that failed, every later commit is synced."""
    db = Db.open(tmp_path / "s.db")
    with db.tx() as conn:
        conn.execute("CREATE TABLE t (v TEXT)")
    with db.tx(durable=False) as conn:
        conn.execute("INSERT INTO t VALUES ('a')")
    after_commit = db.read("PRAGMA synchronous")[0][0]
    with pytest.raises(RuntimeError), db.tx(durable=False) as conn:
        conn.execute("INSERT INTO t VALUES ('b')")
        raise RuntimeError("mid-transaction fault")
    after_fault = db.read("PRAGMA synchronous")[0][0]
    values = db.read("SELECT v FROM t")
    db.close()

    full = 2
    assert (after_commit, after_fault, values) == (full, full, [("a",)])
