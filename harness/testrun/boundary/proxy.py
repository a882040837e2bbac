"""The test side: the module the tests import in place of the candidate, and its connection.

The scratch tree's file at the candidate's place holds two lines that swap in `module(name)`:
a module whose attributes are read from, and written to, the candidate process. The first
read asks the harness (over the broker socket) for a candidate process, which arrives as a
socket passed by SCM_RIGHTS. A request the wait for which was cut short (the per-test alarm,
a dead process) drops that process; the next read gets a fresh one, and module attributes
read before are found again by name, so one hung or crashed test does not fail the rest.
Standard library only (copied into the sandbox).
"""

from __future__ import annotations

import socket
import types
from collections.abc import Iterator, Mapping
from typing import Any

from . import codec, wire

_state: dict[str, Any] = {}


def configure(broker_fd: int, support: list[str]) -> None:
    """Called once by the sandbox bootstrap of a boundary run, before pytest starts."""
    _state["side"] = TestSide(broker_fd, frozenset(support))


def module(name: str) -> types.ModuleType:
    """The stand-in for the candidate module `name`."""
    return CandidateModule(name, _state["side"])


class TestSide(wire.Side):
    """The strict side, with a candidate process that can be replaced."""

    def __init__(self, broker_fd: int, support: frozenset[str]) -> None:
        super().__init__(None, support, strict=True)
        self.broker = socket.socket(fileno=broker_fd)
        self.modules: dict[str, int] = {}

    def take_relays(self, message: dict) -> None:
        wire.replay(self, message)

    def broken(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = None

    def connect(self) -> None:
        self.broker.sendall(b"n")
        _, fds, _, _ = socket.recv_fds(self.broker, 16, 1)
        if not fds:
            raise wire.BoundaryError("the harness could not start a candidate process")
        self.sock = socket.socket(fileno=fds[0])
        self.generation += 1
        self.exports.clear()
        self.export_ids.clear()
        self.remotes.clear()
        self.modules.clear()

    def module_id(self, name: str) -> int:
        if self.sock is None:
            self.connect()
        if name not in self.modules:
            value, _ = self.request("import", n=name)
            self.modules[name] = wire._ref(value)[2]
        return self.modules[name]

    def module_attr(self, name: str, attr: str) -> Any:
        hid = self.module_id(name)
        value, _ = self.request("get", h=hid, n=attr)
        if isinstance(value, wire.Handle):
            side, generation, vid, _ = wire._ref(value)
            object.__setattr__(value, "_boundary_ref", (side, generation, vid, (name, attr)))
        return value

    def current_id(self, ref: tuple) -> int:
        _, generation, hid, origin = ref
        if self.sock is not None and generation == self.generation:
            return hid
        if origin is None:
            raise wire.BoundaryError(
                "this object belonged to a candidate process that was replaced after an "
                "earlier test hung or crashed"
            )
        return wire._ref(self.module_attr(*origin))[2]


_MODULE_DICT = types.ModuleType.__dict__["__dict__"]


class Namespace(Mapping):
    """`vars(module)` of the stand-in: lookups go to the candidate (monkeypatch and
    mock.patch read a module's __dict__ to know what to put back)."""

    def __init__(self, module: CandidateModule) -> None:
        self._module = module

    def __getitem__(self, name: str) -> Any:
        local = _MODULE_DICT.__get__(self._module)
        if name in local:
            return local[name]
        try:
            return getattr(self._module, name)
        except AttributeError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULE_DICT.__get__(self._module))

    def __len__(self) -> int:
        return len(_MODULE_DICT.__get__(self._module))


class CandidateModule(types.ModuleType):
    """Reads, writes and deletes of public names go to the candidate's module."""

    @property  # type: ignore[override]
    def __dict__(self) -> Namespace:  # type: ignore[override]
        return Namespace(self)

    def __init__(self, name: str, side: TestSide) -> None:
        super().__init__(name, "the candidate, reached across the boundary")
        object.__setattr__(self, "_boundary_side", side)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return self._boundary_side.module_attr(self.__name__, attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        if attr.startswith("__"):
            return super().__setattr__(attr, value)
        side = self._boundary_side
        side.request("set", h=side.module_id(self.__name__), n=attr, a=[codec.encode(value, side)])

    def __delattr__(self, attr: str) -> None:
        if attr.startswith("__"):
            return super().__delattr__(attr)
        side = self._boundary_side
        side.request("del", h=side.module_id(self.__name__), n=attr)
