"""The test side: the module the tests import in place of the candidate, and its connection.

The scratch tree's file at the candidate's place holds a few lines that swap in `module(name)`
(or, run as a script by a test, hand the run to the candidate: script.py):
a module whose attributes are read from, and written to, the candidate process. The first
read asks the harness (over the broker socket) for a candidate process, which arrives as a
socket passed by SCM_RIGHTS. A request the wait for which was cut short (the per-test alarm,
a dead process) drops that process; the next read gets a fresh one, and module attributes
read before are found again by name, so one hung or crashed test does not fail the rest.
Standard library only (copied into the sandbox).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import inspect
import os
import socket
import sys
import tempfile
import threading
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from . import codec, observe, remote, script, wire

_state: dict[str, Any] = {}
_REPLACED = "this object belonged to a candidate process that was replaced"


def configure(
    broker_fd: int, support: list[str], observed: str | None = None, shared: str | None = None
) -> None:
    """Called once by the sandbox bootstrap of a boundary run, before pytest starts;
    `observed`: the file the tests' calls are logged to (observe.py), if any; `shared`: the
    folder mounted into both sandboxes at its own path, where the tests' temporary files go
    (`tempfile` as `tmp_path`: a path the tests pass means the same file in the candidate's)."""
    observe.configure(observed)
    side = TestSide(broker_fd, frozenset(support))
    _state["side"] = side
    remote.ACTIVE.append(side)
    own = tempfile.mkdtemp(prefix="boundary-", dir="/tmp")  # this sandbox's own /tmp
    _state["scripts"] = script.Scripts(side, own)
    if shared is not None:
        folder = Path(shared) / "tmp"
        folder.mkdir(mode=0o700, exist_ok=True)
        os.environ["TMPDIR"] = str(folder)
        tempfile.tempdir = None


def module(name: str) -> types.ModuleType:
    """The stand-in for the candidate module `name`."""
    return CandidateModule(name, _state["side"])


def _tree_path() -> list[str]:
    """This process's module search path as it stands, the entries in the tests' tree only,
    relative to it (the tree is the working folder): the candidate's process puts its own
    tree's same folders first in the same order before it imports, so a name resolves there
    to the file it resolved to here (a package `wcwidth` before the module `wcwidth.py` in
    it, as pytest's own path entry put it)."""
    root, found = os.getcwd(), []
    for entry in sys.path:
        if type(entry) is not str:
            continue
        full = os.path.abspath(entry or root)
        inside = full == root or full.startswith(root + os.sep)
        if inside and os.path.isdir(full):  # (not a path hook's name, such as an editable's)
            rel = os.path.relpath(full, root)
            if rel not in found:
                found.append(rel)
    return found


def _environ_now() -> dict:
    """A copy of the environment as `os.environ` keeps it (its encoded `_data`, compared in C
    at every message without decoding a name), or of whatever stands in its place."""
    return dict(getattr(os.environ, "_data", os.environ))


class TestSide(wire.Side):
    """The strict side, with a candidate process that can be replaced. Classes and functions
    of the candidate's are generated here once per name (remote.py) and found again by name
    in a new candidate process."""

    def __init__(self, broker_fd: int | None, support: frozenset[str]) -> None:
        super().__init__(None, support, strict=True)
        self.broker = socket.socket(fileno=broker_fd) if broker_fd is not None else None
        self.modules: dict[str, int] = {}
        self.names: set[str] = set()  # the candidate modules the tests imported
        self.generated: dict[tuple, Any] = {}  # key -> class or function made here
        self.key_refs: dict[tuple, tuple[int, int]] = {}  # key -> (generation, id)
        self.by_id: dict[tuple[int, int], Any] = {}  # (generation, id) -> class or function
        self.origin: dict[int, tuple] = {}  # id(made here) -> key or (generation, id)
        self.watched: dict[int, Any] = {}  # tid -> a container passed to the candidate
        self.shared: dict[int, list] = {}  # hid -> [a module container read, last encoding]
        # (id(class), name) -> how its instances' method `name` looks (see `method`)
        self.methods: dict[tuple[int, str], tuple] = {}
        self.unfused: set[tuple] = set()  # classes and objects the tests set attributes of
        # The environment as the launch began, and as the candidate's process last heard it:
        # what the tests set (monkeypatch.setenv) reaches it with the next message (`ev`).
        self.env_base = dict(os.environ)
        self.env_sent = dict(self.env_base)
        self.env_seen = _environ_now()  # as last compared: unchanged, nothing to look at
        self.syncing = False
        self.lock = threading.RLock()  # one conversation at a time (a script run's thread)

    def request(self, op: str, fds: list[int] | None = None, **fields: Any) -> tuple[Any, list]:
        try:
            self.lock.acquire()
        except BaseException:  # the per-test alarm while a script run holds the connection:
            self.broken()  # drop it (that run fails), so the next test gets a fresh one
            raise
        try:
            return super().request(op, fds, **fields)
        finally:
            self.lock.release()

    def run_script(self, name: str, argv: list[str], fds: list[int]) -> int:
        """The candidate module `name` run as a script with these streams; its status."""
        with self.lock:
            hid = self.module_id(name)
            status = self.request("main", fds, h=hid, n=name, a=[codec.encode(argv, self)])[0]
        return status if type(status) is int else 1

    def take_relays(self, message: dict) -> None:
        wire.replay(self, message)
        for entry in wire.list_of(message.get("cb"))[:10_000]:
            if type(entry) is list and len(entry) == 2 and entry[0] in self.watched:
                wire.refill(self.watched[entry[0]], codec.decode(entry[1], self))
        for tid in wire.list_of(message.get("dr"))[:10_000]:
            self.watched.pop(tid, None) if type(tid) is int else None
        for entry in wire.list_of(message.get("fa"))[:1000]:
            if type(entry) is list and len(entry) == 2 and type(entry[0]) is int:
                self.function_set(entry[0], wire.list_of(entry[1]))
        for entry in wire.list_of(message.get("lc"))[:10_000]:
            if type(entry) is list and len(entry) == 2 and entry[0] in self.shared:
                shared = self.shared[entry[0]]
                wire.refill(shared[0], codec.decode(entry[1], self))
                shared[1] = wire.snapshot(self, shared[0])

    def send(self, message: dict, fds: list[int] | None = None) -> None:
        """The tests' changes to module containers they read ride along (`ls`); those the
        tests no longer hold are let go (`ld`)."""
        if self.shared and not self.syncing:
            self.syncing = True
            try:
                changed = wire.sync_changes(self, self.shared)
                # Held by nothing but the table and getrefcount's argument (its last change,
                # a temporary's `module.NAMES.add(x)`, rides along in this message).
                dropped = [k for k, e in self.shared.items() if sys.getrefcount(e[0]) <= 2]
                for key in dropped:
                    del self.shared[key]
            finally:
                self.syncing = False
            if changed:
                message = {**message, "ls": changed}
            if dropped:
                message = {**message, "ld": dropped}
        seen = getattr(os.environ, "_data", os.environ)
        if seen != self.env_seen:
            self.env_seen = _environ_now()
            env = dict(os.environ)
            if env != self.env_sent:
                told = self.env_sent
                news = [[k, v] for k, v in env.items() if told.get(k) != v]
                message = {**message, "ev": news + [[k, None] for k in told if k not in env]}
                self.env_sent = env
        super().send(message, fds)

    def watch(self, value: Any) -> int | None:
        if type(value) not in (list, dict, set):
            return None
        tid = len(self.watched) + 1
        while tid in self.watched:
            tid += 1
        self.watched[tid] = value
        return tid

    def broken(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):  # wakes a script run's thread blocked on it
                self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()
        self.sock = None

    def connect(self) -> None:
        if self.broker is None:
            raise wire.BoundaryError("no broker to ask for a candidate process")
        self.broker.sendall(b"n")
        _, fds, _, _ = socket.recv_fds(self.broker, 16, 1)
        if not fds:
            raise wire.BoundaryError("the harness could not start a candidate process")
        self.sock = socket.socket(fileno=fds[0])
        self.generation += 1
        self.env_sent = dict(self.env_base)  # a new process has the launch's environment
        self.env_seen = {}
        self.exports.clear()
        self.export_ids.clear()
        self.remotes.clear()
        self.modules.clear()
        self.watched.clear()
        self.shared.clear()

    def module_id(self, name: str) -> int:
        if self.sock is None:
            self.connect()
        self.names.add(name)
        if name not in self.modules:
            value, _ = self.request("import", n=name, p=_tree_path())
            self.modules[name] = wire._ref(value)[2]
        return self.modules[name]

    def module_attr(self, name: str, attr: str) -> Any:
        hid = self.module_id(name)
        value, _ = self.request("get", h=hid, n=attr)
        ref = remote.ref_of(value)
        if ref is not None and ref[3] is None:
            object.__setattr__(value, "_boundary_ref", (*ref[:3], (name, attr)))
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

    # --- classes by name on this side: builtins, support modules, a few stdlib bases ---------

    def local_class(self, module: Any, qualname: Any) -> type | None:
        found = remote.STDLIB_BASES.get((module, qualname)) if type(module) is str else None
        return found or super().local_class(module, qualname)

    def base_class(self, ref: Any) -> type | None:
        if type(ref) is list and ref[:1] == ["b"] and len(ref) == 3:
            return self.local_class(ref[1], ref[2])
        return self.class_node(ref)

    # --- the candidate's classes and functions, made here ------------------------------------

    def class_node(self, node: list) -> Any:
        if node[0] == "b":
            found = self.local_class(*node[1:3]) if len(node) == 3 else None
            if found is None:
                raise codec.CodecError("a class this side does not have arrived by name")
            return found
        hid = node[1] if len(node) in (2, 3) else None
        if type(hid) is not int:
            raise codec.CodecError("a malformed class arrived")
        if len(node) == 2:
            if (self.generation, hid) not in self.by_id:  # its description was in a message
                return self.described(hid)  # that never arrived whole: ask again
            return self.by_id[(self.generation, hid)]
        key = remote.meta_key(node[2])
        cls = self.generated.get(key)
        if cls is None:
            cls = remote.generate(self, key, node[2])
            self.generated[key] = cls
            self.origin[id(cls)] = key
        self.key_refs[key] = (self.generation, hid)
        self.by_id[(self.generation, hid)] = cls
        return cls

    def function(self, node: list) -> Any:
        hid = node[1] if len(node) in (2, 3) else None
        if type(hid) is not int:
            raise codec.CodecError("a malformed function arrived")
        if len(node) == 2:
            if (self.generation, hid) not in self.by_id:
                return self.described(hid)
            return self.by_id[(self.generation, hid)]
        meta = node[2] if type(node[2]) is dict else {}
        module, qualname = str(meta.get("module"))[:200], str(meta.get("qualname"))[:200]
        named = not meta.get("bound") and "<" not in qualname and module in self.names
        key = ("fn", module, qualname)
        target: tuple = key if named else (self.generation, hid)
        fn = self.generated.get(key) if named else None
        if fn is None:
            fn = remote.make_function(self, meta, target)
            self.origin[id(fn)] = target
            if named:
                self.generated[key] = fn
        if named:
            self.key_refs[key] = (self.generation, hid)
        self.by_id[(self.generation, hid)] = fn
        return fn

    def described(self, hid: int) -> Any:
        """A class or function the candidate named by id only: its description, asked for."""
        found = self.request("describe", h=hid)[0]
        if self.by_id.get((self.generation, hid)) is not found:
            raise codec.CodecError("a class or function arrived by an id never described")
        return found

    def resolve(self, target: tuple) -> int:
        """The id a class or function made here has in the current candidate process."""
        if len(target) == 2:  # (generation, id): no name to find it again by
            if self.sock is None or target[0] != self.generation:
                raise wire.BoundaryError(_REPLACED)
            return target[1]
        ref = self.key_refs.get(target)
        if ref is not None and ref[0] == self.generation and self.sock is not None:
            return ref[1]
        module, qualname = (target[1], target[2]) if target[0] == "fn" else target[:2]
        if module not in self.names:
            raise wire.BoundaryError(_REPLACED)
        head, *rest = qualname.split(".")
        found = self.module_attr(module, head)
        for part in rest:
            found = getattr(found, part)
        ref = self.key_refs.get(target)
        if ref is None or ref[0] != self.generation:
            raise wire.BoundaryError(f"{qualname} is no longer in the candidate's module")
        return ref[1]

    def class_request(self, cls: type, op: str, args: tuple = (), kwargs: Any = None,
                      name: Any = None) -> Any:  # fmt: skip
        hid = self.resolve(self.origin[id(cls)])
        if op in ("set", "del"):
            self.unfused.add(id(cls))
        fields = {"h": hid, **self.call_fields(args, kwargs or {})}
        if name is not None:
            fields["n"] = name
        n = observe.construct(self.origin[id(cls)], fields) if op == "call" else None
        value = self.request(op, **fields)[0]
        observe.made(n, remote.ref_of(value))
        return value

    def method(self, obj: Any, ref: tuple, name: str) -> Any:
        """`obj.name`, where the candidate's class defines `name` as a plain function. The
        first read per class is asked of the candidate; its answer (a function made here)
        gives the look (name, qualified name, module, doc, signature) of every later read,
        made here with no round trip: a function whose call is one `xcall`, the attribute read
        at call time in the candidate as `obj.name(...)` reads it. An object or class the
        tests have set an attribute of is always asked (their own function may stand there)."""
        cls = type(obj)
        look = self.methods.get((id(cls), name))
        if look is None or self._unfused(cls, ref):
            value = self.invoke(ref, "get", name=name)
            if type(value) is types.FunctionType and id(value) in self.origin:
                sig = vars(value).get("__signature__")
                doc = value.__doc__
                self.methods[(id(cls), name)] = (
                    *(value.__name__, value.__qualname__, value.__module__, doc, sig),
                )
            return value

        def forward(*args: Any, **kwargs: Any) -> Any:
            return self.self_call(obj, name, args, kwargs)

        forward.__name__, forward.__qualname__, forward.__module__, forward.__doc__ = look[:4]
        if look[4] is not None:
            forward.__signature__ = look[4]  # type: ignore[attr-defined]
        return forward

    def _unfused(self, cls: type, ref: tuple) -> bool:
        if not self.unfused:
            return False
        return (ref[1], ref[2]) in self.unfused or any(id(k) in self.unfused for k in cls.__mro__)

    def invoke(self, ref: tuple, op: str, args: tuple = (), kwargs: Any = None, name: Any = None):
        if op in ("set", "del"):
            self.unfused.add((ref[1], ref[2]))
        value = super().invoke(ref, op, args, kwargs, name)
        if op == "get" and type(name) is str:  # `obj.method`: its calls are the object's
            observe.bound(self.origin.get(id(value)), ref, name)
        return value

    def function_call(self, target: tuple, args: tuple, kwargs: dict) -> Any:
        fields = {"h": self.resolve(target), **self.call_fields(args, kwargs)}
        n = observe.call(target, fields)
        value = self.request("call", **fields)[0]
        observe.made(n, remote.ref_of(value))
        return value

    def self_call(self, obj: Any, name: str, args: tuple, kwargs: dict, op: str = "xcall") -> Any:
        """A method of a candidate object (a proxy by id, a record by value)."""
        ref = remote.ref_of(obj)
        fields = self.call_fields(args, kwargs)
        if ref is not None:
            fields["h"] = self.current_id(ref)
        else:
            if self.sock is None:
                self.connect()
            fields["s"] = codec.encode(obj, self)
        n = observe.method(ref, name, fields) if op == "xcall" else None
        value, back = self.request("xcall" if op == "xcall" else "xget", n=name, **fields)
        observe.made(n, remote.ref_of(value))
        if back and ref is None:
            _refill_record(obj, codec.decode(back[0], self))
        return value

    def state(self, obj: Any) -> Any:
        ref = remote.ref_of(obj)
        return self.request("state", h=self.current_id(ref))[0]

    # --- values of this side going to the candidate ---------------------------------------

    def export(self, value: Any) -> list:
        target = self.origin.get(id(value))
        if target is not None and self.generated.get(target) is value:
            return ["r", self.resolve(target)]
        if target is not None and len(target) == 2 and self.by_id.get(target) is value:
            return ["r", self.resolve(target)]
        ref = remote.ref_of(value)
        if ref is not None and ref[0] is self:
            return ["r", self.current_id(ref)]
        return super().export(value)

    def function_node(self, fn: Any) -> list:
        """A function of the tests': a handle that describes it by value (name, doc,
        signature; a builtin's module), so the candidate's `inspect.signature(f)` and
        `functools.wraps(f)` read it as in plain Python. Its calls come back here."""
        node = self.export(fn)
        if node[0] == "h":
            qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "function")
            node[2]["fn"] = {
                "module": str(getattr(fn, "__module__", None) or ""),
                "qualname": str(qualname),
                "doc": fn.__doc__ if type(fn.__doc__) is str else None,
                "params": remote.params_of(self, fn),
                "returns": remote.returns_of(fn),
                "builtin": isinstance(fn, types.BuiltinFunctionType),
                "attrs": self.function_attrs(fn),
            }
        return node

    def function_set(self, hid: int, attrs: list) -> None:
        """Attributes the candidate set on a function of the tests' (as it could through a
        handle): public names its class does not define, values by value."""
        fn = self.exports.get(hid)
        if not isinstance(fn, types.FunctionType):
            return
        for entry in attrs[:64]:
            if type(entry) is list and len(entry) == 2 and type(entry[0]) is str:
                name = entry[0]
                if name.isidentifier() and not name.startswith("_") and not hasattr(type(fn), name):
                    setattr(fn, name, codec.decode(entry[1], self))

    def function_attrs(self, fn: Any) -> list:
        """A function's own attributes (`parse_number.pattern`, `__wrapped__`), by value as
        it crosses: [name, value node] for each that can cross."""
        found = []
        for name, value in list(getattr(fn, "__dict__", {}).items())[:64]:
            public = type(name) is str and name.isidentifier() and not name.startswith("__")
            # A signature a test set by hand that is no Signature (`f.__signature__ = 34`) is
            # one inspect refuses there too; a real one is in the description already.
            odd = name == "__signature__" and not isinstance(value, inspect.Signature)
            if public or name == "__wrapped__" or odd:
                with contextlib.suppress(codec.CodecError, RecursionError):
                    found.append([name, codec.encode(value, self)])
        return found

    def class_ref(self, cls: type) -> list:
        if id(cls) in self.origin:
            return ["r", self.resolve(self.origin[id(cls)])]
        return super().class_ref(cls)

    def class_value(self, cls: type) -> list:
        """A class the tests pass: the candidate's own by reference, a builtin or support
        class by name (`IndexError` to catch, `int` to check against), else a handle."""
        if id(cls) in self.origin:
            return ["r", self.resolve(self.origin[id(cls)])]
        named = self.local_class(cls.__module__, cls.__qualname__)
        if named is cls and cls.__module__ in ("builtins", *self.support):
            return ["b", cls.__module__, cls.__qualname__]
        node = self.export(cls)
        if node[0] == "h" and issubclass(cls, Exception):  # one to catch: made there by name
            mro = [[c.__module__, c.__qualname__] for c in cls.__mro__ if c is not object]
            node[2]["exc"] = [cls.__module__, cls.__qualname__, mro[:32]]
        return node

    def record_class(self, ref: Any, names: tuple, frozen: bool) -> type:
        if type(ref) is list and ref[:1] == ["k"]:
            cls = self.class_node(ref)
            fields = tuple(f.name for f in dataclasses.fields(cls)) if isinstance(cls, type) else ()
            if not dataclasses.is_dataclass(cls) or fields != names:
                raise codec.CodecError("a record does not match its class")
            return cls
        return super().record_class(ref, names, frozen)

    def tuple_class(self, ref: Any, names: tuple) -> type:
        if type(ref) is list and ref[:1] == ["k"]:
            cls = self.class_node(ref)
            if not issubclass(cls, tuple) or getattr(cls, "_fields", None) != names:
                raise codec.CodecError("a named tuple does not match its class")
            return cls
        return super().tuple_class(ref, names)

    def enum_member(self, ref: Any, base: str, members: list, name: str) -> Any:
        if type(ref) is list and ref[:1] == ["k"]:
            cls = self.class_node(ref)
            if not isinstance(cls, enum.EnumMeta) or name not in cls.__members__:
                raise codec.CodecError("an enum member does not match its class")
            return cls.__members__[name]
        return super().enum_member(ref, base, members, name)

    def exception_type(self, ref: list, mro: Any) -> type:
        if ref[:1] == ["k"]:
            cls = self.class_node(ref)
            if isinstance(cls, type) and issubclass(cls, Exception):
                return cls
        return super().exception_type(ref, mro)

    def live(self, node: list, value: Any) -> Any:
        """A module-level list, dict or set: a plain one of this side, the same object at
        every read, kept equal to the module's at every crossing (either side may change
        it: a test that adds to `module.REGISTRY` changes the candidate's)."""
        hid = node[1]
        if type(hid) is not int or type(value) not in (list, dict, set):
            raise codec.CodecError("a malformed module container arrived")
        if hid in self.shared and type(self.shared[hid][0]) is type(value):
            wire.refill(self.shared[hid][0], value)
        else:
            self.shared[hid] = [value, ""]
        entry = self.shared[hid]
        entry[1] = wire.snapshot(self, entry[0])
        return entry[0]

    def handle(self, node: list) -> Any:
        meta = node[2] if node[0] == "h" and len(node) == 3 and type(node[2]) is dict else {}
        cls_node = meta.get("cls")
        if type(cls_node) is not list or cls_node[:1] != ["k"]:
            return super().handle(node)
        cls = self.class_node(cls_node)
        if not (isinstance(cls, type) and issubclass(cls, remote.RemoteObject)):
            return super().handle(node)
        key = (self.generation, node[1])
        if key not in self.remotes:
            value = codec.decode(meta["val"], self) if "val" in meta else None
            obj = remote.new_proxy(cls, value)
            object.__setattr__(obj, "_boundary_ref", (self, self.generation, node[1], None))
            self.remotes[key] = obj
        return self.remotes[key]


def _refill_record(record: Any, new: Any) -> None:
    if type(new) is type(record) and dataclasses.is_dataclass(record):
        for field in dataclasses.fields(record):
            object.__setattr__(record, field.name, getattr(new, field.name))


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
        if attr == "__all__":  # `from module import *`
            return self._boundary_names()
        if attr.startswith("__"):
            raise AttributeError(attr)
        return self._boundary_side.module_attr(self.__name__, attr)

    def __dir__(self) -> list[str]:
        return sorted({*_MODULE_DICT.__get__(self), *self._boundary_names()})

    def _boundary_names(self) -> list[str]:
        side = self._boundary_side
        names = side.request("names", h=side.module_id(self.__name__))[0]
        return [n for n in names if type(n) is str and n.isidentifier()]

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
