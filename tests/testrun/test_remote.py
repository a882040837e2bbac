"""The test side's generated classes against a real candidate side over a socket pair (a
forked candidate process, no sandbox): what the sandboxed tests cover end to end, in detail."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.testrun.boundary import candidate, proxy, remote

MODULE = textwrap.dedent(
    """
    class Money:
        def __init__(self, cents):
            self.cents = cents

        def __eq__(self, other):
            return isinstance(other, Money) and other.cents == self.cents

        __hash__ = None


    def make(cents):
        return Money(cents)
    """
)


@pytest.fixture
def side(tmp_path: Path) -> Iterator[proxy.TestSide]:
    """A test side whose candidate process serves the module `shop_remote` from tmp_path."""
    (tmp_path / "shop_remote.py").write_text(MODULE)
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the candidate process: the module importable, nothing of the tests
        ours.close()
        sys.path.insert(0, str(tmp_path))
        try:
            candidate.CandidateSide(theirs, frozenset()).serve_forever()
        finally:
            os._exit(0)
    theirs.close()
    tests = proxy.TestSide(None, frozenset())
    tests.sock, tests.generation = ours, 1
    remote.ACTIVE.append(tests)
    try:
        yield tests
    finally:
        remote.ACTIVE.remove(tests)
        ours.close()
        os.waitpid(pid, 0)


def test_a_class_named_by_id_only_is_described_again_on_request(side: proxy.TestSide) -> None:
    """A class whose full description was lost (a message that never arrived whole) is asked
    for again by id, and the same generated class comes back."""
    module = proxy.CandidateModule("shop_remote", side)
    first = module.make(1)
    cls = type(first)
    side.by_id.clear()  # as if the message that described it had been lost

    again = module.make(2)

    assert (type(again) is cls, again == module.make(2), again == first) == (True, True, False)
