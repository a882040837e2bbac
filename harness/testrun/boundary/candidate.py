"""The candidate process: its end of the boundary, and its main loop.

Runs in a sandbox of its own whose file system holds the candidate, the support files and
this package, never a test file. Everything it sends is checked on the test side, so nothing
here needs defending against the candidate: it may rewrite all of it and gain nothing but the
values it could send anyway. What it adds to `wire.Side`:

- classes and functions as nodes that describe them by value (name, qualified name, doc,
  signature, bases, fields, members, which protocol methods the class defines), sent in full
  once per connection and by id after that, from which the test side generates its own;
- the instance state of an object (`state`) for the test side's structural equality;
- `xcall`: a method called on an object sent by value (a record) or by id, the object's
  new state sent back;
- copy-back at every crossing: each list, dict or set the test side passed in is watched
  while the candidate keeps it, and its new value rides along with every message.

Output, log records and warnings ride along with each message. Standard library only.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import enum
import importlib
import importlib.util
import inspect
import logging
import os
import pickle
import socket
import sys
import traceback
import types
import warnings
from typing import Any

from . import codec, remote, wire

# The protocol methods the test side may forward (remote.FORWARDERS has one for each).
PROTOCOLS = (
    *("__len__", "__iter__", "__next__", "__reversed__", "__contains__"),
    *("__getitem__", "__setitem__", "__delitem__", "__call__", "__enter__", "__exit__"),
    *("__str__", "__repr__", "__format__", "__bool__", "__int__", "__float__", "__index__"),
    *("__lt__", "__le__", "__gt__", "__ge__", "__fspath__", "__neg__", "__pos__", "__abs__"),
    *("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__"),
    *("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__and__", "__or__", "__xor__"),
)
_KINDS = (
    (lambda c: issubclass(c, BaseException), "exception"),
    (lambda c: isinstance(c, enum.EnumMeta), "enum"),
    (dataclasses.is_dataclass, "dataclass"),
    (lambda c: c.__bases__[:1] == (tuple,) and type(vars(c).get("_fields")) is tuple, "tuple"),
)


def _own_classes(cls: type) -> list[type]:
    """The classes of `cls`'s MRO whose dicts are the candidate's (not object's or builtins')."""
    return [k for k in cls.__mro__ if k.__module__ != "builtins"]


def _defines(cls: type, name: str) -> bool:
    return any(name in vars(k) for k in _own_classes(cls))


def _env_name(name: Any) -> bool:
    return type(name) is str and name != "" and "=" not in name and "\0" not in name


def follow_path(relative: Any) -> None:
    """Put this tree's folders that the tests' process searches (relative paths, in its
    order) first on the module search path, so a module name resolves here to the file of
    the same place it resolved to there. Anything but plain relative paths inside the tree is
    ignored."""
    root, wanted = os.getcwd(), []
    for rel in wire.list_of(relative)[:100]:
        if type(rel) is not str or os.path.isabs(rel) or ".." in rel.split(os.sep):
            continue
        full = os.path.normpath(os.path.join(root, rel))
        if full not in wanted:
            wanted.append(full)
    if wanted and sys.path[: len(wanted)] != wanted:
        sys.path[:] = [*wanted, *(e for e in sys.path if e not in wanted)]


def _member_kind(value: Any) -> str:
    if isinstance(value, property):
        return "property"
    if isinstance(value, types.FunctionType):  # read on an instance: a bound method
        return "function"
    if isinstance(value, staticmethod | classmethod):
        return "class"
    return "method" if callable(value) else "data"


class CandidateSide(wire.Side):
    """The trusting side: imports what it is asked to, rebuilds any class by name."""

    def __init__(self, sock: socket.socket | None, support: frozenset[str]) -> None:
        super().__init__(sock, support, strict=False)
        self.sent: set[int] = set()  # ids of classes and functions described in full
        self.tracked: dict[int, list] = {}  # tid -> [object, last encoding]
        self.shared: dict[int, list] = {}  # hid -> [module container, last encoding]
        self.foreign: dict[int, tuple[Any, int]] = {}  # id(function made here) -> (it, hid)
        self.attrs: list[list] = []  # [function made here, hid, its attributes last sent]
        self.attr_ids: set[int] = set()

    def make_handle(self, hid: int, meta: dict, origin: Any = None) -> Any:
        """A function of the tests' is a real function here, with its name, doc and
        signature, whose calls go to the test process (a builtin of the standard library's
        is this process's own of that name)."""
        exc = meta.get("exc")
        if type(exc) is list and len(exc) == 3:  # an exception class of the tests': the same
            cls = self.exception_class(*exc)  # mirror its raises are rebuilt as
            self.foreign[id(cls)] = (cls, hid)
            return cls
        described = meta.get("fn")
        if type(described) is not dict:
            return super().make_handle(hid, meta, origin)
        own = self.builtin(described)
        if own is not None:
            return own
        ref = (self, self.generation, hid, origin)

        def call(target: tuple, args: tuple, kwargs: dict) -> Any:
            return self.invoke(ref, "call", args, kwargs)

        fn = remote.make_function(self, described, ref, call)
        self.foreign[id(fn)] = (fn, hid)
        return fn

    def handle(self, node: list) -> Any:
        """A test's function takes the attributes it crosses with (each time: a test may
        change them between calls), and is watched for those the candidate sets."""
        found = super().handle(node)
        foreign = self.foreign.get(id(found))
        if foreign is None or foreign[0] is not found:
            return found
        described = node[2].get("fn") if node[0] == "h" and type(node[2]) is dict else None
        attrs = wire.list_of(described.get("attrs")) if type(described) is dict else []
        for entry in attrs[:64]:  # its attributes, by value
            if type(entry) is list and len(entry) == 2 and type(entry[0]) is str:
                with contextlib.suppress(Exception):
                    setattr(found, entry[0], codec.decode(entry[1], self))
        if id(found) in self.attr_ids:
            for entry in self.attrs:
                if entry[0] is found:
                    entry[2] = dict(vars(found))  # what the tests set is not sent back
        else:
            self.attrs.append([found, foreign[1], dict(vars(found))])  # watched while held
            self.attr_ids.add(id(found))
        return found

    def attr_changes(self) -> list:
        """[hid, [[name, value node]]] for each of the tests' functions whose attributes the
        candidate set since the last message (`with_pattern` marking the tests' function);
        a function nothing here holds any more is let go."""
        changed, kept = [], []
        for entry in self.attrs:
            fn, hid, seen = entry
            now = vars(fn)
            new = [n for n, v in now.items() if n not in seen or seen[n] is not v]
            public = [n for n in new if n.isidentifier() and not n.startswith("__")]
            if public:
                nodes = []
                for name in public[:64]:
                    with contextlib.suppress(codec.CodecError, RecursionError):
                        nodes.append([name, codec.encode(now[name], self)])
                changed.append([hid, nodes])
                entry[2] = dict(now)
            # Held by this list, `foreign`, the handle cache, the loop and getrefcount
            # only: let go (it is watched again whenever it crosses again).
            if sys.getrefcount(fn) > 5:
                kept.append(entry)
            else:
                self.attr_ids.discard(id(fn))
        self.attrs = kept
        return changed

    def builtin(self, described: dict) -> Any:
        if not described.get("builtin"):
            return None
        found = self.local_function(described.get("module"), described.get("qualname"))
        return found if isinstance(found, types.BuiltinFunctionType) else None

    def local_function(self, module: Any, qualname: Any) -> Any:
        if type(module) is not str or type(qualname) is not str or "<" in qualname:
            return None
        try:
            found: Any = importlib.import_module(module)
            for part in qualname.split("."):
                found = getattr(found, part)
        except Exception:
            return None
        return found

    # --- classes by name: the candidate's own, any module ----------------------------------

    def local_class(self, module: Any, qualname: Any) -> type | None:
        if type(module) is not str or type(qualname) is not str or "<" in qualname:
            return None
        try:
            found: Any = importlib.import_module(module)
            for part in qualname.split("."):
                found = getattr(found, part)
        except Exception:
            return None
        return found if isinstance(found, type) else None

    def record_class(self, ref: Any, names: tuple, frozen: bool) -> type:
        local = self.referred(ref)
        if local is not None and dataclasses.is_dataclass(local):
            return local
        return super().record_class(self.as_named(ref), names, frozen)

    def tuple_class(self, ref: Any, names: tuple) -> type:
        local = self.referred(ref)
        if local is not None and issubclass(local, tuple):
            return local
        return super().tuple_class(self.as_named(ref), names)

    def enum_member(self, ref: Any, base: str, members: list, name: str) -> Any:
        local = self.referred(ref)
        if isinstance(local, enum.EnumMeta) and name in local.__members__:
            return local.__members__[name]
        return super().enum_member(self.as_named(ref), base, members, name)

    def referred(self, ref: Any) -> type | None:
        if type(ref) is list and ref[:1] == ["r"]:
            found = self.handle(ref)
            return found if isinstance(found, type) else None
        if type(ref) is list and len(ref) == 3 and ref[0] == "b":
            return self.local_class(ref[1], ref[2])
        return None

    def class_node(self, node: list) -> Any:
        """A class the tests named (a builtin or support class): this process's own."""
        found = self.referred(node)
        if found is None:
            raise codec.CodecError("a class arrived that this side does not have")
        return found

    def as_named(self, ref: Any) -> list:
        found = self.referred(ref)
        if found is not None:
            return ["b", found.__module__, found.__qualname__]
        return ref

    # --- classes and functions as nodes -------------------------------------------------------

    def is_shared(self, cls: type) -> bool:
        """A builtin class, or a support module's: the test side has its own of that name."""
        module, qualname = cls.__module__, cls.__qualname__
        if module == "builtins":
            return getattr(builtins, qualname, None) is cls
        if remote.STDLIB_BASES.get((module, qualname)) is cls:
            return True
        return module in self.support and self.local_class(module, qualname) is cls

    def class_ref(self, cls: type) -> list:
        foreign = self.foreign.get(id(cls))
        if foreign is not None and foreign[0] is cls:  # the tests' own class, going back
            return ["r", foreign[1]]
        if self.is_shared(cls):
            return ["b", cls.__module__, cls.__qualname__]
        hid = self.export(cls)[1]
        if id(cls) in self.sent:
            return ["k", hid]
        self.sent.add(id(cls))
        return ["k", hid, self.class_meta(cls)]

    def class_value(self, cls: type) -> list:
        return self.class_ref(cls)

    def class_meta(self, cls: type) -> dict:
        kind = next((name for test, name in _KINDS if test(cls)), "plain")
        meta: dict[str, Any] = {
            "module": str(cls.__module__),
            "qualname": str(cls.__qualname__),
            "doc": cls.__doc__ if type(cls.__doc__) is str else None,
            "kind": kind,
            "bases": [self.class_ref(b) for b in cls.__bases__ if b is not object],
            "ops": [name for name in PROTOCOLS if _defines(cls, name)],
            "eq": _defines(cls, "__eq__") and cls.__eq__ is not object.__eq__,
            "hashable": cls.__hash__ is not None,
            "init": _defines(cls, "__init__"),
            "members": self.members(cls),
        }
        if kind == "dataclass":
            params = cls.__dataclass_params__  # type: ignore[attr-defined]
            meta["fields"] = [f.name for f in dataclasses.fields(cls)]
            meta["params"] = [params.eq, params.order, params.frozen, params.unsafe_hash]
        elif kind == "tuple":
            meta["fields"] = list(cls._fields)  # type: ignore[attr-defined]
        elif kind == "enum":
            meta["base"] = "int" if issubclass(cls, int) else "str" if issubclass(cls, str) else ""
            meta["fields"] = [
                [n, codec.encode(m.value, self)]
                for n, m in cls.__members__.items()  # type: ignore[attr-defined]
                if n == m.name
            ]
        return meta

    def members(self, cls: type) -> dict[str, str]:
        found: dict[str, str] = {}
        for klass in reversed(_own_classes(cls)):
            for name, value in vars(klass).items():
                if type(name) is str and name.isidentifier() and not name.startswith("__"):
                    found[name] = _member_kind(value)
        if _defines(cls, "__getattribute__"):  # its own reads: none is known to be a method
            found = {k: "method" if v == "function" else v for k, v in found.items()}
        return dict(list(found.items())[:500])

    def function_node(self, fn: Any) -> list:
        foreign = self.foreign.get(id(fn))
        if foreign is not None and foreign[0] is fn:  # the tests' own function, going back
            return ["r", foreign[1]]
        hid = self.export(fn)[1]
        if id(fn) in self.sent:
            return ["fn", hid]
        if not isinstance(fn, types.MethodType):
            self.sent.add(id(fn))
        qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "function")
        meta = {
            "module": str(getattr(fn, "__module__", None) or ""),
            "qualname": str(qualname),
            "doc": fn.__doc__ if type(fn.__doc__) is str else None,
            "params": self.params(fn),
            "returns": self.returns(fn),
            "bound": isinstance(fn, types.MethodType | types.BuiltinMethodType)
            and not isinstance(getattr(fn, "__self__", None), types.ModuleType),
            "coroutine": inspect.iscoroutinefunction(fn),
        }
        return ["fn", hid, meta]

    def params(self, fn: Any) -> list | None:
        return remote.params_of(self, fn)

    def returns(self, fn: Any) -> str | None:
        return remote.returns_of(fn)

    def export(self, value: Any) -> list:
        if type(value) is Live:
            hid = super().export(value.value)[1]
            kind = type(value.value).__name__
            node = codec.encode(value.value, self)
            self.shared[hid] = [value.value, wire.snapshot(self, value.value)]
            return ["lv", hid, kind, node]
        node = super().export(value)
        cls = type(value)
        if node[0] != "h":  # the test side's own object, going back: a reference
            return node
        plain = isinstance(value, type) or cls in codec.FUNCTIONS or self.is_shared(cls)
        if not plain and cls.__module__ not in _PLAIN_MODULES:
            node[2]["cls"] = self.class_ref(cls)
            base = remote.value_base(cls)
            if base is not None:  # a str (int, ...) subclass: its builtin value, by value
                node[2]["val"] = codec.encode(_VALUE_OF[base](value), self)
        return node

    # --- requests only the candidate serves ------------------------------------------------

    def perform(self, message: dict) -> tuple[Any, list | None]:
        op = message.get("q")
        if op == "import":
            follow_path(message.get("p"))
        if op == "xcall":
            return self.xcall(message)
        if op == "state":
            return state_of(self.target(message)), None
        if op == "init":
            args, kwargs = self.arguments(message)
            self.target(message).__init__(*args, **kwargs)
            return None, None
        if op == "dump":
            return pickle.dumps(self.target(message)), None
        if op == "load":
            data = self.arguments(message)[0]
            return pickle.loads(data[0] if data else b""), None
        if op == "xget":
            return getattr(self.target(message), wire.str_of(message.get("n"))), None
        if op == "describe":  # a class or function in full again (see TestSide.described)
            target = self.target(message)
            self.sent.discard(id(target))
            return target, None
        if op == "main":  # the module run as a script, with the streams sent right after
            fds = streams(self.sock)
            return run_main(wire.str_of(message.get("n")), self.arguments(message)[0], fds), None
        if op == "sig":  # a callable object's signature, for the tests' inspect.signature
            target = self.target(message)
            return [remote.params_of(self, target), remote.returns_of(target)], None
        if op == "names":  # a module's public names, for `import *` and dir()
            return public_names(self.target(message)), None
        value, back = super().perform(message)
        owner = self.exports.get(message.get("h"))
        if op == "get" and type(value) in (list, dict, set) and type(owner) is types.ModuleType:
            return Live(value), back  # module state: the tests change this one
        return value, back

    def target(self, message: dict) -> Any:
        if "s" in message:
            return codec.decode(message["s"], self)
        hid = message.get("h")
        if type(hid) is not int or hid not in self.exports:
            raise wire.BoundaryError("a request for an object this side never exported")
        return self.exports[hid]

    def xcall(self, message: dict) -> tuple[Any, list | None]:
        """A method of an object called by name (a protocol method or a public one); an
        object sent by value goes back too, as its state may have changed."""
        target = self.target(message)
        name = wire.str_of(message.get("n"))
        args, kwargs = self.arguments(message)
        if name == "__exit__":
            exc = args[0] if args else None
            result = target.__exit__(type(exc) if exc else None, exc, None)
        else:
            result = getattr(target, name)(*args, **kwargs)
        back = [codec.encode(target, self)] if "s" in message else None
        return result, back

    def arguments(self, message: dict) -> tuple[list, dict]:
        args, kwargs = super().arguments(message)
        for entry in wire.list_of(message.get("t")):  # containers to watch for copy-back
            if type(entry) is list and len(entry) == 2 and type(entry[1]) is int:
                key, tid = entry
                value = args[key] if type(key) is int and key < len(args) else kwargs.get(key)
                if type(value) in (list, dict, set):
                    self.tracked[tid] = [value, codec.encode(value, self)]
        return args, kwargs

    def send(self, message: dict, fds: list[int] | None = None) -> None:
        if self.tracked:
            changed, dropped = self.changes()
            if changed:
                message = {**message, "cb": changed}
            if dropped:
                message = {**message, "dr": dropped}
        if self.shared:
            changed = wire.sync_changes(self, self.shared)
            if changed:
                message = {**message, "lc": changed}
        if self.attrs:
            changed = self.attr_changes()
            if changed:
                message = {**message, "fa": changed}
        super().send(message, fds)

    def take_relays(self, message: dict) -> None:
        """The tests' changes to module containers they read, made to the module's own; the
        tests' changes to their environment, made to this process's."""
        for entry in wire.list_of(message.get("ev"))[:10_000]:
            if type(entry) is not list or len(entry) != 2 or not _env_name(entry[0]):
                continue
            if entry[1] is None:
                os.environ.pop(entry[0], None)
            elif type(entry[1]) is str and "\0" not in entry[1]:
                os.environ[entry[0]] = entry[1]
        for entry in wire.list_of(message.get("ls"))[:10_000]:
            if type(entry) is list and len(entry) == 2 and entry[0] in self.shared:
                shared = self.shared[entry[0]]
                wire.refill(shared[0], codec.decode(entry[1], self))
                shared[1] = wire.snapshot(self, shared[0])
        for hid in wire.list_of(message.get("ld"))[:10_000]:
            self.shared.pop(hid, None) if type(hid) is int else None

    def changes(self) -> tuple[list, list]:
        """Watched containers whose value changed, and those nothing here holds any more."""
        changed, dropped = [], []
        for tid, entry in list(self.tracked.items()):
            try:
                now = codec.encode(entry[0], self)
            except (codec.CodecError, RecursionError):
                now = entry[1]
            if wire.dumps(now) != wire.dumps(entry[1]):
                entry[1] = now
                changed.append([tid, now])
            # Held only by this table, the loop and getrefcount's own argument.
            if sys.getrefcount(entry[0]) <= 3:
                dropped.append(tid)
                del self.tracked[tid]
        return changed, dropped


class Live:
    """A module-level list, dict or set read by the tests: crosses as a shared container
    (its changes on either side are made on the other at every crossing)."""

    def __init__(self, value: Any) -> None:
        self.value = value


# The exact builtin value of an instance of a subclass (never the subclass's own methods).
_VALUE_OF = {str: str.__str__, int: int.__int__, float: float.__float__, bytes: bytes.__bytes__}
# Classes that are neither the candidate's nor shared: generic handles.
_PLAIN_MODULES = frozenset({"builtins", "_io", "io", "itertools", "collections", "types"})


def streams(sock: Any) -> list[int]:
    """A script run's stdin, stdout and stderr: one byte carrying them follows its request."""
    _, fds, _, _ = socket.recv_fds(sock, 1, 3)
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise wire.BoundaryError("a script run arrived without its three streams")
    return fds


def run_main(name: str, args: list, fds: list[int]) -> int:
    """Run the module `name` as `__main__` with `args` as its command line and `fds` as its
    stdin, stdout and stderr; its exit status (as the interpreter would give it)."""
    import runpy

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return 1
    saved = sys.argv, sys.stdin, sys.stdout, sys.stderr
    streams = [
        open(fds[0], encoding="utf-8", closefd=True),  # noqa: SIM115 (closed below)
        open(fds[1], "w", encoding="utf-8", closefd=True),  # noqa: SIM115
        open(fds[2], "w", encoding="utf-8", closefd=True),  # noqa: SIM115
    ]
    given = args[0] if args and type(args[0]) is list else []
    sys.argv = [spec.origin, *(str(a) for a in given)]
    sys.stdin, sys.stdout, sys.stderr = streams
    status = 0
    try:
        runpy.run_path(spec.origin, run_name="__main__")
    except SystemExit as exc:
        status = _exit_status(exc.code)
    except BaseException:
        traceback.print_exc()
        status = 1
    finally:
        for stream in streams:
            with contextlib.suppress(Exception):
                stream.flush()
            with contextlib.suppress(Exception):
                stream.close()
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved
    return status


def _exit_status(code: Any) -> int:
    if code is None:
        return 0
    if type(code) is int:
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def public_names(module: Any) -> list[str]:
    names = getattr(module, "__all__", None)
    if isinstance(names, list | tuple) and all(type(n) is str for n in names):
        return list(names)
    return [n for n in vars(module) if type(n) is str and not n.startswith("_")]


def state_of(obj: Any) -> dict:
    """An instance's state: its __dict__ and slots, by name."""
    found: dict[str, Any] = {}
    with contextlib.suppress(TypeError):
        found.update(vars(obj))
    for klass in type(obj).__mro__:
        slots = vars(klass).get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                found[name] = getattr(obj, name)
    return found


def serve(fd: int, support: list[str]) -> None:
    """Answer the test side on the socket `fd` until it closes; then exit at once."""
    side = CandidateSide(socket.socket(fileno=fd), frozenset(support))
    sys.stdout = wire.Capture(side, "o")  # type: ignore[assignment]
    sys.stderr = wire.Capture(side, "e")  # type: ignore[assignment]
    root = logging.getLogger()
    root.addHandler(wire.Relay(side))
    root.setLevel(logging.DEBUG)  # the test side's loggers decide what is kept
    warnings.simplefilter("always")
    warnings.showwarning = wire.relay_warning(side)
    with contextlib.suppress(wire.BoundaryError, OSError):
        side.serve_forever()
    os._exit(0)
