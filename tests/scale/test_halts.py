"""A resumed night that a refused key halted starts without the halt, and only that night's
halt is forgotten."""

from __future__ import annotations

import uuid

import pytest

pytest.importorskip("psycopg", reason="needs the scale extra (psycopg)")

from harness.calls.shared import SharedGates, clear_halt
from harness.llm import AuthenticationError, ErrorKind


def test_clearing_a_nights_halt_lets_its_next_processes_run_and_keeps_the_others(database):
    """Two halted nights: clear_halt(one) forgets that one's refusal (a process opened after
    it sees no halt) and leaves the other night halted; clearing twice finds nothing."""
    one, other = (f"night-{uuid.uuid4().hex[:8]}" for _ in range(2))
    for night in (one, other):
        gates = SharedGates(database, night)
        gates.halt(AuthenticationError(ErrorKind.AUTH, "key refused", status=401, provider="sim"))
        gates.close()

    assert clear_halt(database, one) is True
    assert clear_halt(database, one) is False

    fresh_one, fresh_other = SharedGates(database, one), SharedGates(database, other)
    try:
        assert fresh_one.halted() is None
        halted = fresh_other.halted()
        assert halted is not None and halted.status == 401
    finally:
        fresh_one.close()
        fresh_other.close()
