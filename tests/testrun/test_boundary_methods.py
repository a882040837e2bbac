"""Methods of the tests' objects, called by the candidate across the boundary: the read and the
call travel as one `meth` request (half the round trips of a read then a call), with the same
meaning as `getattr(obj, name)(...)` at call time, and with the same grant as a read: a mock's
own machinery stays out of reach however it is asked for. A forked candidate process over a
socket pair, no sandbox."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pytest

from harness.testrun.boundary import proxy
from tests.testrun.test_remote import forked_side

MODULE = textwrap.dedent(
    """
    def tick(store, key):
        store.incr(key)
        return store.incr(key)


    def keep_then_call(store, key):
        later = store.incr
        return later(key)


    def read_size(store):
        return store.size


    def call_shadowed(store):
        return store.label()


    def reset(mock):
        ref = object.__getattribute__(mock, "_boundary_ref")
        return ref[0].invoke(ref, "meth", (), {}, name="reset_mock")
    """
)


class Store:
    """A support-like object of the tests: methods, a property, an instance attribute that
    shadows a method of its class."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def incr(self, key: str) -> int:
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.counts[key]

    def label(self) -> str:
        return "class"

    @property
    def size(self) -> int:
        return len(self.counts)


class Counting(proxy.TestSide):
    """The test side, noting the operation of every request the candidate makes of it."""

    def __init__(self) -> None:
        super().__init__(None, frozenset())
        self.asked: list[Any] = []

    def answer(self, message: dict) -> None:
        self.asked.append(message.get("q"))
        super().answer(message)


@pytest.fixture
def side(tmp_path: Path) -> Iterator[Counting]:
    """A test side whose candidate process serves the module `calls_remote` from tmp_path."""
    (tmp_path / "calls_remote.py").write_text(MODULE)
    with forked_side(tmp_path, Counting()) as tests:
        yield tests


def test_a_method_call_is_one_request(side: Counting) -> None:
    """Two `store.incr(key)` calls are two `meth` requests, no `get`, and the state is the
    tests' object's."""
    store = Store()

    result = proxy.CandidateModule("calls_remote", side).tick(store, "a")

    assert (result, store.counts, side.asked) == (2, {"a": 2}, ["meth", "meth"])


def test_a_method_read_and_called_later_is_still_called_on_the_object(side: Counting) -> None:
    """`later = store.incr; later(key)` calls the tests' object's method."""
    store = Store()

    result = proxy.CandidateModule("calls_remote", side).keep_then_call(store, "b")

    assert (result, store.counts) == (1, {"b": 1})


def test_a_property_is_read_not_called(side: Counting) -> None:
    """A property is not a method: it is read with `get`."""
    store = Store()
    store.incr("x")

    result = proxy.CandidateModule("calls_remote", side).read_size(store)

    assert (result, side.asked) == (1, ["get"])


def test_an_instance_attribute_shadowing_a_method_is_what_is_called(side: Counting) -> None:
    """The name is looked up on the object at call time, as Python would: an instance
    attribute set by the tests wins over the class's method."""
    store = Store()
    store.label = lambda: "instance"  # type: ignore[method-assign]

    result = proxy.CandidateModule("calls_remote", side).call_shadowed(store)

    assert result == "instance"


def test_a_mock_machinery_method_is_refused_through_a_raw_meth_request(side: Counting) -> None:
    """A `meth` request is granted as a read: `reset_mock` of a mock is refused, and the
    mock keeps its record of calls."""
    sender = Mock()
    sender.send("x")

    with pytest.raises(AttributeError, match="machinery"):
        proxy.CandidateModule("calls_remote", side).reset(sender)

    assert sender.send.call_count == 1
