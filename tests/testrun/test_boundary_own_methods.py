"""Methods of the candidate's objects, called by the tests across the boundary: after the first
read of a method per class, `obj.method(...)` is one `xcall` request (the read and the call
in one round trip), the method read keeps its honest look (name, qualified name, doc,
signature), and whatever the tests set on an object or class is read back as theirs. A forked
candidate process over a socket pair, no sandbox."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.testrun.boundary import proxy
from tests.testrun.test_remote import forked_side

MODULE = textwrap.dedent(
    '''
    class Counter:
        """Counts."""

        def __init__(self):
            self.n = 0

        def add(self, k: int = 1) -> int:
            """Adds k."""
            self.n += k
            return self.n

        @property
        def value(self):
            return self.n

        class Inner:
            pass


    class Reader:
        def __getattribute__(self, name):
            if name == "add":
                return lambda *args: "its own read"
            return object.__getattribute__(self, name)

        def add(self, k):
            return k


    def make():
        return Counter()


    def make_reader():
        return Reader()
    '''
)


class Counting(proxy.TestSide):
    """The test side, noting the operation of every request it makes of the candidate."""

    def __init__(self) -> None:
        super().__init__(None, frozenset())
        self.sent: list[Any] = []

    def request(self, op: str, fds: list[int] | None = None, **fields: Any) -> tuple[Any, list]:
        self.sent.append(op)
        return super().request(op, fds, **fields)


@pytest.fixture
def side(tmp_path: Path) -> Iterator[Counting]:
    """A test side whose candidate process serves the module `own_methods` from tmp_path."""
    (tmp_path / "own_methods.py").write_text(MODULE)
    with forked_side(tmp_path, Counting()) as tests:
        yield tests


def _module(side: Counting) -> Any:
    return proxy.CandidateModule("own_methods", side)


def test_after_the_first_read_per_class_a_method_call_is_one_request(side: Counting) -> None:
    """The first `counter.add(...)` of the class reads then calls; every later call, on that
    object or another of its class, is one `xcall` and nothing else."""
    module = _module(side)
    first, second = module.make(), module.make()
    first.add(2)
    side.sent.clear()

    results = (first.add(3), second.add(), second.add(5))

    assert (results, side.sent) == ((5, 1, 6), ["xcall", "xcall", "xcall"])


def test_a_method_read_without_a_round_trip_keeps_its_honest_look(side: Counting) -> None:
    """The method made here has the candidate's name, qualified name, doc and signature, the
    same on the first read (asked of the candidate) as on a later one (made here)."""
    counter = _module(side).make()

    looks = [
        (m.__name__, m.__qualname__, m.__doc__, str(inspect.signature(m)))
        for m in (counter.add, counter.add)
    ]

    assert looks == [("add", "Counter.add", "Adds k.", "(k: int = 1) -> int")] * 2


def test_a_property_is_still_read_from_the_candidate(side: Counting) -> None:
    """A property is a read, asked each time: its value, not a method."""
    counter = _module(side).make()
    counter.add(4)
    side.sent.clear()

    assert (counter.value, counter.value, side.sent) == (4, 4, ["get", "get"])


def test_a_nested_class_read_on_an_object_is_the_class(side: Counting) -> None:
    """A class defined in the class is callable but no method: reading it gives the class."""
    counter = _module(side).make()
    counter.add()

    assert isinstance(counter.Inner, type) and counter.Inner.__name__ == "Inner"


def test_a_function_the_tests_set_on_an_object_is_read_back_as_theirs(side: Counting) -> None:
    """Once the tests set `obj.add`, reading it asks the candidate, which holds the tests'
    function: the read is the tests' own function, not a method made here."""
    counter = _module(side).make()
    counter.add()

    def fake(k: int = 1) -> int:
        return -k

    counter.add = fake

    assert counter.add is fake and counter.add(7) == -7


def test_a_function_the_tests_set_on_the_class_is_what_a_read_gives(side: Counting) -> None:
    """The tests replace `Counter.add` after a method read: a later read on an instance is
    asked of the candidate again (whose class now holds the tests' function), not the method's
    old look made here."""
    module = _module(side)
    counter = module.make()
    counter.add()

    def fake(*args: Any) -> str:
        return "the tests'"

    type(counter).add = fake
    read = counter.add

    assert (read.__name__, read()) == ("fake", "the tests'")


def test_a_class_with_its_own_attribute_read_is_asked_every_time(side: Counting) -> None:
    """A class that defines `__getattribute__` decides its own reads: each `reader.add` is
    asked of the candidate, and the call gets what its read gave."""
    reader = _module(side).make_reader()
    side.sent.clear()

    results = (reader.add(1), reader.add(2))

    assert results == ("its own read", "its own read")
    assert side.sent.count("get") == 2 and "xcall" not in side.sent
