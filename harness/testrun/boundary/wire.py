"""One side of the boundary: framed JSON requests and replies, handles, exception mirrors.

Both processes run a `Side`. A request names an object the other side exported (a handle
id) and an operation; while a side waits for its reply it serves the other side's requests
(a candidate calling back into a fixture). The test side is `strict`: its handles compare
and hash by identity, are always true, and forward only calls, item access, iteration and
context management, never the candidate's `__eq__`, `__hash__` or `__bool__`; what it serves
the candidate is limited to public attributes and calls (no dunders, frames, code, globals
or modules). Exceptions cross as (module, qualname, base classes, args) and are rebuilt as
the receiving side's own builtin or support class, else as a mirror class with builtin or
support bases; a BaseException that is not an Exception (KeyboardInterrupt, pytest's
outcomes) is never rebuilt as such. SystemExit itself is (`pytest.raises(SystemExit)` around
a CLI's `main`): pytest fails a test that lets it out, as it does any error. Standard library
only (copied into the sandbox).
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import importlib
import json
import logging
import operator
import socket
import struct
import sys
import traceback
import types
import warnings
from typing import Any

from . import codec

try:
    import orjson
except ImportError:  # no wheel for this platform: the standard library's, ~5x slower
    orjson = None  # type: ignore[assignment]

# Every key of a message, in one place. A message is a JSON object; a request has `q`, a reply
# has `a` (the request's `i`) and either `v`, `x` or `stop`; any message may carry the
# sender's relays (the last group), which the receiver takes before anything else.
MESSAGE_KEYS: dict[str, str] = {
    # requests
    "q": "the operation (one of OPERATIONS)",
    "i": "the request's number, which its reply names",
    "h": "the handle id of the object asked (a class, function, module or instance)",
    "n": "a name: the attribute, method or module",
    "a": "in a request: the positional arguments, as value nodes; in a reply: the `i` it answers",
    "k": "the keyword arguments, as [name, value node] pairs",
    "t": "the lists, dicts and sets among the arguments, numbered for copy-back",
    "s": "the object asked, sent by value (a record) instead of by handle",
    "p": "with `import`: the tests' search path in their tree, relative, in its order",
    # replies
    "v": "the value returned, as a value node",
    "x": "the exception raised, as a value node",
    "stop": "the iterator asked is exhausted",
    "sb": "the record sent by value, as the call left it",
    # relays, riding along with any message
    "o": "the candidate's standard output since its last message",
    "e": "the candidate's standard error since its last message",
    "lg": "the candidate's log records: [logger, level, text]",
    "wn": "the candidate's warnings: [module, qualname, mro, text, file, line]",
    "cb": "copy-back: the tests' containers the candidate changed, [number, value]",
    "dr": "copy-back: numbers of the tests' containers the candidate holds no more",
    "lc": "module containers the candidate changed, [handle, value]",
    "ls": "module containers the tests changed, [handle, value]",
    "ld": "handles of module containers the tests hold no more",
    "ev": "the tests' environment variables changed since the last message, [name, value|null]",
    "fa": "attributes the candidate set on the tests' functions, [handle, pairs]",
}
# Every operation, with who asks it of whom ("tests": the tests' process asks the candidate's;
# "candidate": the other way; "both").
OPERATIONS: dict[str, tuple[str, str]] = {
    "import": ("tests", "a candidate module, by name"),
    "get": ("both", "an attribute of the object"),
    "set": ("both", "set an attribute of the object"),
    "del": ("both", "delete an attribute of the object"),
    "call": ("both", "call the object"),
    "meth": ("both", "read a method of the object and call it, in one request"),
    "exit": ("both", "the object's __exit__ with the exception given"),
    "xcall": ("tests", "a method of the candidate's object (by handle or by value), by name"),
    "xget": ("tests", "an attribute of a candidate record sent by value"),
    "state": ("tests", "the instance state of a candidate object, by value (structural ==)"),
    "init": ("tests", "run the candidate class's __init__ on an instance the tests made"),
    "dump": ("tests", "pickle the candidate's object, in its process"),
    "load": ("tests", "unpickle bytes the candidate made, in its process"),
    "describe": ("tests", "a class or function sent by id only, in full again"),
    "main": ("tests", "run a candidate module as a script, with the streams sent after"),
    "sig": ("tests", "a callable object's signature"),
    "names": ("tests", "a module's public names (import *, dir)"),
    **{op: ("both", f"the builtin `{op}` of the object") for op in ("iter", "next", "len")},
    **{op: ("both", f"item {op[:-4]} of the object") for op in ("getitem", "setitem", "delitem")},
    "contains": ("both", "`in`"),
    "str": ("both", "str() of the object"),
    "repr": ("both", "repr() of the object"),
    "enter": ("both", "the object's __enter__"),
    **{op: ("both", f"operator.{op} with the argument") for op in ("eq", "lt", "le")},
    "hash": ("both", "hash() of the object"),
    "bool": ("both", "bool() of the object"),
    **{op: ("both", f"operator.{op} with the argument") for op in ("add", "sub", "mul")},
}
MAX_FRAME = 64 << 20
MAX_TEXT = 1 << 20
_HEADER = struct.Struct(">I")
# Attributes that reach a frame, code or globals without a dunder name.
_FRAME_ATTRS = frozenset(
    {
        *("gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "f_back"),
        *("f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next", "func_globals"),
    }
)
_HIDDEN_TYPES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType)
# An object's descriptive dunders: readable across (never written), and only as text.
METADATA = frozenset({"__name__", "__qualname__", "__doc__", "__module__"})


class BoundaryError(RuntimeError):
    """The candidate process is gone, was replaced, or broke the protocol."""


class CandidateTraceback(Exception):
    """The candidate process's traceback, shown as the cause of the error it raised there
    (as concurrent.futures shows a worker's)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"raised in the candidate process:\n{self.text}"


class Stop(Exception):
    """Internal: the other side's iterator is exhausted."""


def _check_name(name: Any) -> str:
    if type(name) is not str or not name.isidentifier():
        raise AttributeError("an attribute name that is not an identifier")
    if name.startswith("__") or name in _FRAME_ATTRS:
        raise AttributeError(f"{name!r} is not reachable across the boundary")
    return name


def _ident(text: str) -> str:
    name = text.rpartition(".")[2]
    return name if name.isidentifier() else "Mirror"


class Side(codec.Hooks):
    """This process's end of one connection: what it exports and what it holds of the other."""

    def __init__(self, sock: socket.socket | None, support: frozenset[str], strict: bool) -> None:
        super().__init__()
        self.sock, self.support, self.strict = sock, support, strict
        self.exports: dict[int, Any] = {}
        self.export_ids: dict[int, int] = {}
        self.remotes: dict[tuple[int, int], Any] = {}
        self.generation, self.seq = 0, 0
        self.outbox: dict[str, Any] = {}  # what rides along with the next message (relays)
        self.frozen: dict[int, Any] = {}  # id -> a tuple or frozenset known to hold scalars only

    # --- classes by name, on this side --------------------------------------------------

    def local_class(self, module: Any, qualname: Any) -> type | None:
        """A builtin class, or a class of a support module, this side already has."""
        if type(module) is not str or type(qualname) is not str:
            return None
        if module == "builtins":
            found = getattr(builtins, qualname, None) if qualname.isidentifier() else None
            return found if isinstance(found, type) else None
        if module not in self.support or "<" in qualname:
            return None
        try:
            found = importlib.import_module(module)
            for part in qualname.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError):
            return None
        return found if isinstance(found, type) else None

    def record_class(self, ref: Any, names: tuple, frozen: bool) -> type:
        local = self.local_class(*self.named(ref))
        if (
            local is not None
            and dataclasses.is_dataclass(local)
            and tuple(f.name for f in dataclasses.fields(local)) == names
        ):
            return local
        return super().record_class(ref, names, frozen)

    def tuple_class(self, ref: Any, names: tuple) -> type:
        local = self.local_class(*self.named(ref))
        if (
            local is not None
            and issubclass(local, tuple)
            and local.__dict__.get("_fields") == names
        ):
            return local
        return super().tuple_class(ref, names)

    def enum_member(self, ref: Any, base: str, members: list, name: str) -> Any:
        local = self.local_class(*self.named(ref))
        if local is not None and issubclass(local, enum.Enum) and name in local.__members__:
            return local.__members__[name]
        return super().enum_member(ref, base, members, name)

    # --- exceptions -----------------------------------------------------------------------

    def exception_node(self, value: BaseException, encoder: Any, depth: int) -> list:
        cls = type(value)
        mro = [[c.__module__, c.__qualname__] for c in cls.__mro__ if c is not object][:32]
        ref = self.class_ref(cls) if not self.strict else ["b", cls.__module__, cls.__qualname__]
        args = []
        for arg in value.args[:16]:
            try:
                args.append(encoder.enc(arg, depth + 1))
            except (codec.CodecError, RecursionError):
                args.append(["v", _safe_str(arg)])
        attrs = []
        for name, attr in list(getattr(value, "__dict__", {}).items())[:32]:
            if type(name) is str and name.isidentifier() and not name.startswith("__"):
                try:
                    attrs.append([name, encoder.enc(attr, depth + 1)])
                except (codec.CodecError, RecursionError):
                    continue
        tb = "".join(traceback.format_exception(value))[-8000:] if not self.strict else ""
        return ["x", ref, mro, args, tb, attrs, _safe_str(value)[:MAX_TEXT]]

    def exception_class(self, module: Any, qualname: Any, mro: Any) -> type:
        """This side's class for an exception of the other side (see the module docstring)."""
        if type(mro) is not list or len(mro) > 64:
            raise codec.CodecError("a malformed exception arrived")
        exact = self.local_class(module, qualname)
        if exact is not None and (issubclass(exact, Exception) or exact is SystemExit):
            return exact
        found = []
        for entry in mro:
            if type(entry) is list and len(entry) == 2:
                local = self.local_class(*entry)
                if local is not None and issubclass(local, Exception) and local not in found:
                    found.append(local)
        bases = tuple(b for b in found if not any(o is not b and issubclass(o, b) for o in found))
        key = ("x", str(module)[:200], str(qualname)[:200], bases)
        if key not in self._classes:
            self._classes[key] = _mirror(str(module)[:200], str(qualname)[:200], bases)
        return self._classes[key]

    def exception(self, node: list) -> BaseException:
        if len(node) != 7 or type(node[5]) is not list or type(node[1]) is not list:
            raise codec.CodecError("a malformed exception arrived")
        _, ref, mro, args, tb, attrs, text = node
        cls = self.exception_type(ref, mro)
        values = [codec.decode(a, self) for a in args] if type(args) is list else []
        try:
            if isinstance(getattr(cls, "__init__", None), types.FunctionType):
                # A Python `__init__` (a support class's) made these args from its own
                # parameters already; its attributes come with the value.
                exc = cls.__new__(cls, *values)
                exc.args = tuple(values)
            else:
                exc = type.__call__(cls, *values)  # built here, never by its metaclass
        except Exception:
            exc = cls.__new__(cls)
            exc.args = tuple(values)
        if type(text) is str and getattr(cls, "_boundary_key", None) is not None:
            object.__setattr__(exc, "_boundary_text", text)
        for entry in attrs[:32]:  # instance attributes (an error's `field`), as values
            if type(entry) is list and len(entry) == 2 and type(entry[0]) is str:
                name = entry[0]
                if name.isidentifier() and not name.startswith("__"):
                    object.__setattr__(exc, name, codec.decode(entry[1], self))
        if type(tb) is str and tb:
            # The cause, not a note: `pytest.raises(match=)` matches notes too, so a note
            # would break an honest pattern anchored with `$`.
            exc.__cause__ = CandidateTraceback(tb[-8000:])
        return exc

    def exception_type(self, ref: list, mro: Any) -> type:
        """The class an arriving exception is rebuilt as (the test side adds its own)."""
        if ref[:1] == ["b"] and len(ref) == 3:
            return self.exception_class(ref[1], ref[2], mro)
        if ref[:1] == ["r"]:
            found = self.handle(ref)
            if isinstance(found, type) and issubclass(found, BaseException):
                return found
        if ref[:1] == ["k"] and len(ref) == 3 and type(ref[2]) is dict:
            return self.exception_class(ref[2].get("module"), ref[2].get("qualname"), mro)
        return self.exception_class("?", "Error", mro)

    # --- handles --------------------------------------------------------------------------

    def export(self, value: Any) -> list:
        if isinstance(value, Handle) and _ref(value)[0] is self:
            return ["r", _ref(value)[2]]
        key = id(value)
        hid = self.export_ids.get(key)
        if hid is None or self.exports.get(hid) is not value:
            hid = len(self.exports) + 1
            self.exports[hid], self.export_ids[key] = value, hid
        cls = type(value)
        mro = [[c.__module__, c.__qualname__] for c in cls.__mro__ if c is not object][:32]
        ops = sorted(n for n in HANDLE_OPS if _has(cls, n))
        off = sorted(n for n in HANDLE_OPS if _has(cls, n) is None)  # `__iter__ = None`
        name = _safe_str(getattr(cls, "__qualname__", "?"))
        meta = {"mro": mro, "name": name, "ops": ops, "off": off}
        methods = _methods(cls) if self.strict else ()
        if methods:
            meta["methods"] = methods
        return ["h", hid, meta]

    def handle(self, node: list) -> Any:
        if node[0] == "r":
            hid = node[1]
            if type(hid) is not int or hid not in self.exports:
                raise codec.CodecError("a reference to an object this side never exported")
            return self.exports[hid]
        if len(node) != 3 or type(node[1]) is not int or type(node[2]) is not dict:
            raise codec.CodecError("a malformed handle arrived")
        hid, meta = node[1], node[2]
        key = (self.generation, hid)
        if key not in self.remotes:
            self.remotes[key] = self.make_handle(hid, meta)
        return self.remotes[key]

    def make_handle(self, hid: int, meta: dict, origin: Any = None) -> Any:
        bases = []
        for entry in meta.get("mro") if type(meta.get("mro")) is list else []:
            if type(entry) is list and len(entry) == 2 and entry[0] != "builtins":
                local = self.local_class(*entry)
                if local is not None and not any(issubclass(b, local) for b in bases):
                    bases.append(local)
        name = meta.get("name") if type(meta.get("name")) is str else "Handle"
        ops, off = meta.get("ops"), meta.get("off")
        ops = frozenset(n for n in ops if n in HANDLE_OPS) if type(ops) is list else HANDLE_OPS
        off = frozenset(n for n in off if n in HANDLE_OPS) if type(off) is list else frozenset()
        cls = _handle_class(self, _ident(name)[:100], tuple(bases), ops, off)
        obj = object.__new__(cls)
        object.__setattr__(obj, "_boundary_ref", (self, self.generation, hid, origin))
        methods = meta.get("methods")
        if not self.strict and type(methods) is list:
            names = frozenset(m for m in methods[:_MAX_METHODS] if type(m) is str)
            object.__setattr__(obj, "_boundary_methods", names)
        return obj

    # --- the connection ---------------------------------------------------------------------

    def send(self, message: dict, fds: list[int] | None = None) -> None:
        if self.outbox:
            message = {**message, **self.outbox}
            self.outbox = {}
        data = dumps(message)
        if self.sock is None:
            raise BoundaryError("the candidate process is not connected")
        self.sock.sendall(_HEADER.pack(len(data)) + data)
        if fds:  # a script run's standard streams: one byte of their own, after the message
            socket.send_fds(self.sock, [b"F"], fds)

    def receive(self) -> dict:
        head = _read(self.sock, _HEADER.size)
        (size,) = _HEADER.unpack(head)
        if size > MAX_FRAME:
            raise BoundaryError(f"a message of {size} bytes is over the {MAX_FRAME} byte cap")
        body = _read(self.sock, size)
        try:
            message = loads(body)
        except (ValueError, RecursionError) as exc:
            raise BoundaryError(f"a malformed message arrived: {type(exc).__name__}") from None
        if type(message) is not dict:
            raise BoundaryError("a malformed message arrived")
        self.take_relays(message)
        return message

    def take_relays(self, message: dict) -> None:
        """Hook: the test side writes the candidate's output, logs and warnings here."""

    def request(self, op: str, fds: list[int] | None = None, **fields: Any) -> tuple[Any, list]:
        """Send one request and serve the other side's requests until its reply arrives;
        returns (value, copy-back). Anything that stops the wait (a dead peer, the per-test
        alarm) leaves the connection unusable: `broken()` is told."""
        self.seq += 1
        mine, replied = self.seq, False
        try:
            self.send({"q": op, "i": mine, **fields}, fds)
            while True:
                message = self.receive()
                if "q" in message:
                    self.answer(message)
                    continue
                if message.get("a") != mine:
                    raise BoundaryError("a reply arrived out of order")
                replied = True
                return self.reply_value(message)
        except BaseException:
            if not replied:
                self.broken()
            raise

    def broken(self) -> None:
        """Hook: the test side drops a connection it can no longer trust to be in step."""

    def reply_value(self, message: dict) -> tuple[Any, list]:
        if "x" in message:
            raise codec.decode(message["x"], self)
        if message.get("stop"):
            raise Stop
        back = message.get("sb")
        return codec.decode(message.get("v"), self), back if type(back) is list else []

    def answer(self, message: dict) -> None:
        """Serve one request of the other side; its exceptions go back as exception values."""
        reply: dict[str, Any] = {"a": message.get("i")}
        try:
            value, back = self.perform(message)
            reply["v"] = codec.encode(value, self)
            if back:
                reply["sb"] = back
        except StopIteration as exc:
            if not _is_next(message):  # a function that let StopIteration out raised it
                reply["x"] = codec.encode(exc, self)
            else:
                reply["stop"] = True
        except codec.CodecError as exc:
            reply["x"] = codec.encode(TypeError(str(exc)), self)
        except BaseException as exc:
            reply["x"] = codec.encode(exc, self)
        self.send(reply)

    def perform(self, message: dict) -> tuple[Any, list | None]:
        op, hid = message.get("q"), message.get("h")
        if op == "import" and not self.strict:
            return importlib.import_module(str_of(message.get("n"))), None
        if type(hid) is not int or hid not in self.exports:
            raise BoundaryError("a request for an object this side never exported")
        target = self.exports[hid]
        if op in ("call", "meth"):
            return self.call(target, message)
        args = [codec.decode(a, self) for a in list_of(message.get("a"))]
        if op == "get" and message.get("n") in METADATA:  # text, or nothing
            value = getattr(target, str_of(message.get("n")))
            if value is not None and type(value) is not str:
                raise AttributeError(f"{message.get('n')} is not text")
            return value, None
        if op == "get":
            return self.allowed(getattr(target, self.granted(target, message, False))), None
        if op == "set":
            setattr(target, self.granted(target, message, True), *args[:1])
            return None, None
        if op == "del":
            delattr(target, self.granted(target, message, True))
            return None, None
        if op == "exit":
            exc = args[0] if args else None
            return target.__exit__(type(exc) if exc else None, exc, None), None
        if op not in _OPS:
            raise BoundaryError("an unknown operation was requested")
        return self.allowed(_OPS[op](target, *args)), None

    def name(self, message: dict) -> str:
        name = message.get("n")
        return _check_name(name) if self.strict else str_of(name)

    def granted(self, target: Any, message: dict, write: bool) -> str:
        """The attribute name of a request, if the object grants it. The tests' objects grant
        the candidate their public data and methods, never a rewrite of what their class
        defines (a mock's assertions, a method), and a mock grants its child attributes only,
        not its own machinery (`assert_*`, `reset_mock`, `return_value`, `call_args`)."""
        name = self.name(message)
        if not self.strict:
            return name
        defined = hasattr(type(target), name)
        if write and defined:
            raise AttributeError(f"{name!r} is its class's: the candidate may not replace it")
        if defined and type(target).__module__ == "unittest.mock":
            raise AttributeError(f"{name!r} is a mock's own machinery, not granted")
        return name

    def allowed(self, value: Any) -> Any:
        if self.strict and isinstance(value, _HIDDEN_TYPES):
            raise AttributeError("modules, frames and code do not cross the boundary")
        return value

    def call(self, target: Any, message: dict) -> tuple[Any, list | None]:
        args, kwargs = self.arguments(message)
        if message.get("q") == "meth":  # `get` and `call` in one message: granted as a `get`
            target = self.allowed(getattr(target, self.granted(target, message, False)))
        return target(*args, **kwargs), None

    def arguments(self, message: dict) -> tuple[list, dict]:
        args = [codec.decode(a, self) for a in list_of(message.get("a"))]
        kwargs = {str_of(k): codec.decode(v, self) for k, v in _pairs(message.get("k"))}
        return args, kwargs

    def serve_forever(self) -> None:
        while True:
            self.answer(self.receive())

    # --- requests from handles ----------------------------------------------------------

    def invoke(self, ref: tuple, op: str, args: tuple = (), kwargs: Any = None, name: Any = None):
        fields = {"h": self.current_id(ref), **self.call_fields(args, kwargs or {})}
        if name is not None:
            fields["n"] = name
        return self.request(op, **fields)[0]

    def call_fields(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        """Arguments as value nodes, and the containers among them to copy back."""
        fields: dict[str, Any] = {"a": [codec.encode(a, self) for a in args]}
        if kwargs:
            fields["k"] = [[k, codec.encode(v, self)] for k, v in kwargs.items()]
        watched = [[k, self.watch(v)] for k, v in [*enumerate(args), *kwargs.items()]]
        watched = [w for w in watched if w[1] is not None]
        if watched:
            fields["t"] = watched
        return fields

    def watch(self, value: Any) -> int | None:
        """Hook: the test side numbers the lists, dicts and sets it passes (copy-back)."""
        return None

    def current_id(self, ref: tuple) -> int:
        """Hook: the test side re-finds module attributes after a candidate was replaced."""
        return ref[2]


def _has(cls: type, name: str) -> bool | None:
    """`cls` has the protocol method `name` (object's own defaults do not count); None when
    the class turns it off (`__iter__ = None`: not iterable even with `__getitem__`)."""
    for klass in cls.__mro__:
        if name in vars(klass):
            if vars(klass)[name] is None:
                return None
            return klass is not object
    return False


def _is_next(message: dict) -> bool:
    """A request to advance an iterator: its StopIteration is the iterator's end."""
    return message.get("q") == "next" or message.get("n") == "__next__"


_OPS = {
    "iter": iter,
    "next": next,
    "len": len,
    "getitem": operator.getitem,
    "setitem": operator.setitem,
    "delitem": operator.delitem,
    "contains": operator.contains,
    "str": str,
    "repr": repr,
    "enter": lambda target: target.__enter__(),
    "eq": operator.eq,
    "lt": operator.lt,
    "le": operator.le,
    "hash": hash,
    "bool": bool,
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
}


def _mirror(module: str, qualname: str, bases: tuple) -> type:
    namespace = {"__module__": module, "__qualname__": qualname}
    for candidate in (bases or (Exception,), bases[:1], (Exception,)):
        try:
            return type(_ident(qualname), candidate, namespace)
        except TypeError:
            continue
    return type("Mirror", (Exception,), namespace)


_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})


def snapshot(side: Side, value: Any) -> tuple:
    """What a shared container's change is told by: a shallow copy when it holds builtin
    scalars, and tuples and frozensets of them, only (nothing in it can change in place, so
    the builtins' own `==` on the copies tells; tuples already seen are not walked again),
    else its encoding's text."""
    items = [*value.keys(), *value.values()] if type(value) is dict else value
    if _frozen_items(items, side.frozen):
        return ("copy", type(value)(value))
    try:
        return ("text", dumps(codec.encode(value, side)))
    except (codec.CodecError, RecursionError):
        return ("none", None)


def _frozen_items(items: Any, seen: dict[int, Any]) -> bool:
    scalars, id_ = _SCALARS, id
    for x in items:
        kind = type(x)
        if kind in scalars:
            continue
        if (kind is tuple or kind is frozenset) and (seen.get(id_(x)) is x or _deep_frozen(x)):
            seen[id_(x)] = x  # held here, so its id is never another's
            continue
        return False
    return True


def _deep_frozen(value: Any, depth: int = 0) -> bool:
    if type(value) in _SCALARS:
        return True
    if type(value) in (tuple, frozenset) and depth < 32:
        return all(_deep_frozen(x, depth + 1) for x in value)
    return False


def sync_changes(side: Side, shared: dict[int, list]) -> list:
    """[key, new value] for each shared container whose value changed since it was last
    sent or received (both sides keep one, the tests' and the module's)."""
    changed = []
    for key, entry in list(shared.items()):
        now = snapshot(side, entry[0])
        if now != entry[1] and now[0] != "none":
            entry[1] = now
            changed.append([key, codec.encode(entry[0], side)])
    return changed


def refill(original: Any, value: Any) -> None:
    """`original` (a list, dict or set) takes `value`, in place."""
    if type(original) is list and type(value) is list:
        original[:] = value
    elif isinstance(original, dict | set) and type(value) is type(original):
        original.clear()
        original.update(value)


def _read(sock: socket.socket | None, size: int) -> bytes:
    """Exactly `size` bytes (never into what follows: a `main` request's descriptors)."""
    if sock is None:
        raise BoundaryError("the candidate process is not connected")
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise BoundaryError("the candidate process closed the connection (it died or exited)")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def dumps(value: Any) -> bytes:
    """A message's JSON text: orjson's, or where it cannot write the value (a lone
    surrogate, an integer past 64 bits) the standard library's, which escapes them. No
    value node carries a non-finite float (the codec writes those as text)."""
    if orjson is not None:
        try:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:
            pass
    return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()


def loads(data: bytes) -> Any:
    """A message read: orjson first (a per-message cost on both sides of every crossing);
    what it refuses is read again by the standard library, which takes the escapes `dumps`
    may have written and refuses NaN and Infinity as orjson does."""
    if orjson is not None:
        try:
            return orjson.loads(data)
        except ValueError:
            pass
    return json.loads(data, parse_constant=_no_constant)


def str_of(value: Any) -> str:
    if type(value) is not str:
        raise BoundaryError("a malformed name arrived")
    return value


def list_of(value: Any) -> list:
    if value is None:
        return []
    if type(value) is not list:
        raise BoundaryError("malformed arguments arrived")
    return value


def _pairs(value: Any) -> list:
    items = list_of(value)
    if any(type(p) is not list or len(p) != 2 or type(p[0]) is not str for p in items):
        raise BoundaryError("malformed keyword arguments arrived")
    return items


def _safe_str(value: Any) -> str:
    try:
        text = str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"
    return text if type(text) is str else "<unprintable>"


def _ref(handle: Any) -> tuple:
    return object.__getattribute__(handle, "_boundary_ref")


# --- handles ------------------------------------------------------------------------------


def _send(handle: Any, op: str, *args: Any, **kwargs: Any) -> Any:
    ref = _ref(handle)
    return ref[0].invoke(ref, op, args, kwargs)


class Handle:
    """An object of the other side. Identity equality and hashing, always true; calls, item
    access, iteration and context management are forwarded (those of them the object's class
    has: `_handle_class`), nothing else is asked of it."""

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("__") or name in _OWN:
            return object.__getattribute__(self, name)
        ref = _ref(self)
        try:
            methods = object.__getattribute__(self, "_boundary_methods")
        except AttributeError:
            methods = ()
        if name in methods:  # the owner named it a method: the read rides with the call
            return BoundMethod(self, name)
        return ref[0].invoke(ref, "get", name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        ref = _ref(self)
        ref[0].invoke(ref, "set", (value,), name=name)

    def __delattr__(self, name: str) -> None:
        ref = _ref(self)
        ref[0].invoke(ref, "del", name=name)

    def __str__(self) -> str:
        text = _send(self, "str")
        return text if type(text) is str else object.__repr__(self)

    def __repr__(self) -> str:
        ref = _ref(self)
        return f"<{type(self).__qualname__} handle {ref[2]} from the other process>"

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return object.__hash__(self)

    def __bool__(self) -> bool:
        return True


class BoundMethod:
    """`handle.name`, where the other side described `name` as a method of the object's
    class: calling it is one `meth` request (the attribute read and the call in one round
    trip, read at call time as `getattr(obj, name)(...)` would). Only ever made on the
    candidate's side, for the test side's objects; the test side checks the request as a
    read of `name` followed by a call, whatever the hint said."""

    __slots__ = ("_handle", "_name")

    def __init__(self, handle: Any, name: str) -> None:
        self._handle, self._name = handle, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ref = _ref(self._handle)
        return ref[0].invoke(ref, "meth", args, kwargs, name=self._name)

    def __repr__(self) -> str:
        return f"<bound method {self._name} of {self._handle!r}>"


class TrustingHandle(Handle):
    """A handle the candidate side holds for a test-side object: the test side's own objects
    are trusted, so their comparisons, truth and arithmetic are asked of them, and their
    names read (a decorator's `functools.wraps`)."""

    def __getattribute__(self, name: str) -> Any:
        if name in METADATA:
            ref = _ref(self)
            return ref[0].invoke(ref, "get", name=name)
        return Handle.__getattribute__(self, name)

    def __eq__(self, other: object) -> bool:
        return _send(self, "eq", other)

    def __ne__(self, other: object) -> bool:
        return not _send(self, "eq", other)

    def __hash__(self) -> int:
        return _send(self, "hash")

    def __bool__(self) -> bool:
        return _send(self, "bool")

    def __repr__(self) -> str:
        return _send(self, "repr")


def _h_call(self: Any, *args: Any, **kwargs: Any) -> Any:
    return _send(self, "call", *args, **kwargs)


_OWN = frozenset({"_boundary_ref", "_boundary_methods"})
_MAX_METHODS = 256


def _methods(cls: type) -> list[str]:
    """The names a class (not `object`, not a mock) defines as plain functions: reading one
    on an instance gives a bound method. A hint for the other side, never trusted."""
    if cls.__module__ == "unittest.mock":
        return []
    found: dict[str, None] = {}
    for klass in cls.__mro__[:-1]:
        for name, value in vars(klass).items():
            if isinstance(value, types.FunctionType) and not name.startswith("__"):
                found.setdefault(name, None)
    return list(found)[:_MAX_METHODS]


def _h_next(self: Any) -> Any:
    try:
        return _send(self, "next")
    except Stop:
        raise StopIteration from None


def _h_len(self: Any) -> int:
    n = _send(self, "len")
    if type(n) is not int or n < 0:
        raise TypeError("the candidate's __len__ returned something that is not a length")
    return n


def _h_contains(self: Any, item: Any) -> bool:
    found = _send(self, "contains", item)
    if type(found) is not bool:
        raise TypeError("the candidate's __contains__ did not return a bool")
    return found


def _h_exit(self: Any, kind: Any, exc: Any, tb: Any) -> bool:
    ref = _ref(self)
    sent = exc if isinstance(exc, Exception) else None
    return ref[0].invoke(ref, "exit", (sent,) if sent is not None else ()) is True


def _h_op(op: str, arity: int) -> Any:
    if arity == 0:
        return lambda self: _send(self, op)
    return lambda self, other: _send(self, op, other)


def _h_setitem(self: Any, key: Any, value: Any) -> None:
    _send(self, "setitem", key, value)


# The protocol methods a handle may forward; a handle's class has those of them the object's
# class has, and no other (so `isinstance(h, Sized)` or `callable(h)` reads as for the
# object: a generator handed over is an iterator, not a sized container).
_HANDLE_METHODS: dict[str, Any] = {
    "__call__": _h_call,
    "__iter__": _h_op("iter", 0),
    "__next__": _h_next,
    "__len__": _h_len,
    "__getitem__": _h_op("getitem", 1),
    "__setitem__": _h_setitem,
    "__delitem__": _h_op("delitem", 1),
    "__contains__": _h_contains,
    "__enter__": _h_op("enter", 0),
    "__exit__": _h_exit,
}
# Asked of the tests' objects only (the trusting side's handles).
_TRUSTED_METHODS: dict[str, Any] = {
    "__lt__": _h_op("lt", 1),
    "__le__": _h_op("le", 1),
    "__add__": _h_op("add", 1),
    "__sub__": _h_op("sub", 1),
    "__mul__": _h_op("mul", 1),
}
HANDLE_OPS = frozenset({*_HANDLE_METHODS, *_TRUSTED_METHODS})


def _handle_class(
    side: Side, name: str, bases: tuple, ops: frozenset = HANDLE_OPS, off: frozenset = frozenset()
) -> type:
    base = Handle if side.strict else TrustingHandle
    key = ("handle", name, bases, base, ops, off)
    if key not in side._classes:
        table = _HANDLE_METHODS if side.strict else {**_HANDLE_METHODS, **_TRUSTED_METHODS}
        ns: dict[str, Any] = {"__module__": "harness_boundary"}
        ns |= {op: method for op, method in table.items() if op in ops}
        if "__enter__" not in ns or "__exit__" not in ns:
            ns.pop("__enter__", None), ns.pop("__exit__", None)
        ns |= {op: None for op in off if op in ("__iter__", "__call__", "__len__")}
        cls: type | None = None
        if bases:
            try:
                cls = type(name, (base, *bases), ns)
                if getattr(cls, "__abstractmethods__", None):
                    cls.__abstractmethods__ = frozenset()  # type: ignore[attr-defined]
                object.__new__(cls)
            except TypeError:
                cls = None
        side._classes[key] = cls or type(name, (base,), ns)
    return side._classes[key]


# --- relays (candidate side collects, test side replays) ----------------------------------


class Capture:
    """A text stream whose writes ride along with the next message."""

    def __init__(self, side: Side, key: str) -> None:
        self.side, self.key = side, key

    def write(self, text: str) -> int:
        text = str(text)
        self.side.outbox[self.key] = (self.side.outbox.get(self.key, "") + text)[-MAX_TEXT:]
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class Relay(logging.Handler):
    """Log records of the candidate, sent as (logger, level, message) with the next message."""

    def __init__(self, side: Side) -> None:
        super().__init__(logging.NOTSET)
        self.side = side

    def emit(self, record: logging.LogRecord) -> None:
        entry = [record.name, record.levelno, _safe_str(record.getMessage())[:MAX_TEXT]]
        self.side.outbox.setdefault("lg", []).append(entry)


def relay_warning(side: Side) -> Any:
    def show(message: Any, category: type, filename: str, lineno: int, *rest: Any) -> None:
        mro = [[c.__module__, c.__qualname__] for c in category.__mro__ if c is not object]
        entry = [category.__module__, category.__qualname__, mro[:32], _safe_str(message)]
        entry += [_safe_str(filename)[:1000], lineno if type(lineno) is int else 0]
        side.outbox.setdefault("wn", []).append(entry)

    return show


def replay(side: Side, message: dict) -> None:
    """On the test side: the candidate's output, log records and warnings, as if local."""
    for key, stream in (("o", sys.stdout), ("e", sys.stderr)):
        text = message.get(key)
        if type(text) is str:
            stream.write(text[-MAX_TEXT:])
    for entry in list_of(message.get("lg"))[:1000]:
        if type(entry) is list and len(entry) == 3 and type(entry[1]) is int:
            name, level, text = (str(e)[:MAX_TEXT] for e in entry)
            logging.getLogger(name).log(int(level), text)
    for entry in list_of(message.get("wn"))[:1000]:
        if type(entry) is list and len(entry) == 6:
            cls = side.exception_class(entry[0], entry[1], entry[2])
            category = cls if issubclass(cls, Warning) else UserWarning
            text, filename, lineno = str(entry[3])[:MAX_TEXT], str(entry[4])[:1000], entry[5]
            lineno = lineno if type(lineno) is int and 0 <= lineno < 1 << 31 else 0
            # Where the candidate said it was; no registry, so none is suppressed as seen.
            warnings.warn_explicit(text, category, filename, lineno)
