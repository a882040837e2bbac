"""The test side's own objects for the candidate's classes and functions, generated here.

A class node (codec tag `k`) describes a candidate class by value; `generate` makes a real
test-side class from it, once per (module, qualified name, kind), so identity holds across
reads and across candidate processes: `isinstance`, `issubclass`, `pytest.raises`,
`pickle` by reference and subclassing work. What each kind becomes:

- exception: a subclass of the builtin and support exception classes among its bases (never
  of a `BaseException` that is not an `Exception`); instances are values (args, attributes).
- dataclass: a dataclass made here over the same fields (`==`, `hash`, order generated);
  instances are records; other attributes and methods are asked of the candidate with the
  record by value, its new fields copied back.
- tuple, enum: a named tuple or enum made here; instances are values.
- plain: instances are proxies: attribute reads, writes and calls forwarded (a method the
  class defines as a plain function, once its look is known, is made here and its call is
  one `xcall`: see `TestSide.method`); `==` and `hash`
  structural over instance state when the class defines `__eq__`, identity otherwise;
  order forwarded, the other operand crossing as any argument does.

Only the protocol methods of a fixed table (`FORWARDERS`) are ever defined, and only those the
candidate's class defines; a name the candidate sends is never made an attribute of a class
here (record fields pass `codec.field_names`). Function nodes become real functions with the
candidate's name, qualified name, module, doc and signature, whose calls are forwarded.
Standard library only (copied into the sandbox).
"""

from __future__ import annotations

import abc
import collections.abc
import dataclasses
import datetime as dt
import enum
import inspect
import keyword
import types
from typing import Any

from . import codec, wire

# Stdlib classes a candidate class may derive from that the test side resolves by name.
STDLIB_BASES: dict[tuple[str, str], type] = {
    ("datetime", "tzinfo"): dt.tzinfo,
    ("abc", "ABC"): abc.ABC,
    ("enum", "Enum"): enum.Enum,
    ("enum", "IntEnum"): enum.IntEnum,
    ("enum", "Flag"): enum.Flag,
    ("enum", "IntFlag"): enum.IntFlag,
    ("enum", "StrEnum"): enum.StrEnum,
    # The collections ABCs (`class numeric_range(Sequence, Hashable)`): `isinstance` against
    # them holds; their mixin methods the class does not define run here over forwarded ones.
    **{("collections.abc", n): getattr(collections.abc, n) for n in collections.abc.__all__},
}
ACTIVE: list[Any] = []  # this process's test side (proxy.configure)
# An object's descriptive dunders, read from the candidate's object (values: text, never code).
METADATA = frozenset({"__name__", "__qualname__", "__doc__", "__module__"})
_KINDS = ("exception", "dataclass", "tuple", "enum", "plain")
_ORDER = ("__lt__", "__le__", "__gt__", "__ge__")


def ref_of(obj: Any) -> tuple | None:
    """The (side, generation, id, origin) of a proxy, None for anything else."""
    try:
        return object.__getattribute__(obj, "_boundary_ref")
    except AttributeError:
        return None


def _side(cls: type) -> Any:
    for klass in cls.__mro__:
        side = vars(klass).get("_boundary_side")
        if side is not None:
            return side
    raise TypeError("not a class of the candidate's")


def _owner(cls: type) -> type:
    """The generated class in `cls`'s MRO (`cls` itself, or the class a test subclassed)."""
    return next(k for k in cls.__mro__ if "_boundary_key" in vars(k))


class RemoteMeta(type):
    """The metaclass of generated classes: construction and class attributes are the
    candidate's (a class the tests derive from one is built here, as any class)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_boundary_key" in vars(cls):
            return _side(cls).class_request(cls, "call", args, kwargs)
        return super().__call__(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        owner = _owner(cls)
        side = _side(owner)
        if id(owner) not in side.origin:  # still being made (dataclasses reads defaults)
            raise AttributeError(name)
        return side.class_request(owner, "get", name=name)

    def __setattr__(cls, name: str, value: Any) -> None:
        if _local(cls, name):
            return super().__setattr__(name, value)
        _side(cls).class_request(cls, "set", (value,), name=name)

    def __delattr__(cls, name: str) -> None:
        if _local(cls, name):
            return super().__delattr__(name)
        _side(cls).class_request(cls, "del", name=name)


def _local(cls: type, name: str) -> bool:
    """A class attribute set here: a private one, on a class the tests derived, or while the
    class is being made (a support base's `__init_subclass__`)."""
    if name.startswith("_") or "_boundary_key" not in vars(cls):
        return True
    return id(cls) not in _side(cls).origin


class RemoteObject(metaclass=RemoteMeta):
    """A proxy of a candidate object (or, in a class the tests derived, a local instance)."""

    def __getattribute__(self, name: str) -> Any:
        ref = ref_of(self)
        if ref is None or name == "_boundary_ref":
            return object.__getattribute__(self, name)
        if name.startswith("__") and name not in METADATA:
            return object.__getattribute__(self, name)
        if vars(type(self)).get("_boundary_members", {}).get(name) == "function":
            return ref[0].method(self, ref, name)  # a method: its call, one round trip
        return ref[0].invoke(ref, "get", name=name)

    def __getattr__(self, name: str) -> Any:
        # Reached for local instances only: the candidate class's attribute, bound here.
        if name.startswith("__") or ref_of(self) is not None:
            raise AttributeError(name)
        value = getattr(_owner(type(self)), name)
        return types.MethodType(value, self) if isinstance(value, types.FunctionType) else value

    def __setattr__(self, name: str, value: Any) -> None:
        ref = ref_of(self)
        if ref is None:
            return object.__setattr__(self, name, value)
        ref[0].invoke(ref, "set", (value,), name=name)

    def __delattr__(self, name: str) -> None:
        ref = ref_of(self)
        if ref is None:
            return object.__delattr__(self, name)
        ref[0].invoke(ref, "del", name=name)

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} object of the candidate's>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Pickled by the candidate, in its process; the bytes go back there to be loaded,
        # never unpickled here.
        ref = ref_of(self)
        if ref is None:
            return object.__reduce_ex__(self, protocol)
        data = ref[0].invoke(ref, "dump")
        return (load_pickled, (type(self).__module__, data))

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__


class RemoteRecord(metaclass=RemoteMeta):
    """The base of generated dataclasses: fields are local values, the rest is asked of the
    candidate with the record by value."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        owner = _owner(type(self))
        if vars(owner).get("_boundary_members", {}).get(name) in ("method", "function"):
            return lambda *args, **kwargs: _side(owner).self_call(self, name, args, kwargs)
        return _side(owner).self_call(self, name, (), {}, op="get")


# --- protocol methods, forwarded --------------------------------------------------------------


def _forward(obj: Any, name: str, *args: Any) -> Any:
    try:
        return _side(type(obj)).self_call(obj, name, args, {})
    except wire.Stop:
        raise StopIteration from None


def _checked(name: str, kind: type | tuple) -> Any:
    def method(self: Any, *args: Any) -> Any:
        value = _forward(self, name, *args)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise TypeError(f"the candidate's {name} returned a {type(value).__name__}")
        return value

    method.__name__ = name
    return method


def _plain(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs:  # `__call__` only: the other protocol methods take no keywords
            return _side(type(self)).self_call(self, name, args, kwargs)
        return _forward(self, name, *args)

    method.__name__ = name
    return method


def _ordered(name: str) -> Any:
    # Forwarded with the other operand as it crosses (a value of the tests' by copy): the
    # candidate's order is the code under test. Unlike `==`, no assertion reads a lying
    # `<` as a pass of something else (`assert a < b` tests the order itself).
    def method(self: Any, other: Any) -> Any:
        value = _forward(self, name, other)
        return value if type(value) is bool else NotImplemented

    method.__name__ = name
    return method


def _length(self: Any) -> int:
    n = _forward(self, "__len__")
    if type(n) is not int or n < 0:
        raise TypeError("the candidate's __len__ returned something that is not a length")
    return n


def _exit(self: Any, kind: Any, exc: Any, tb: Any) -> bool:
    sent = (exc,) if isinstance(exc, Exception) else ()
    return _forward(self, "__exit__", *sent) is True


FORWARDERS: dict[str, Any] = {
    "__len__": _length,
    "__exit__": _exit,
    **{n: _checked(n, bool) for n in ("__bool__", "__contains__")},
    **{n: _checked(n, str) for n in ("__str__", "__repr__", "__format__", "__fspath__")},
    **{n: _checked(n, int) for n in ("__int__", "__index__")},
    "__float__": _checked("__float__", float),
    **{n: _ordered(n) for n in _ORDER},
    **{
        n: _plain(n)
        for n in (
            *("__iter__", "__next__", "__reversed__", "__getitem__", "__setitem__"),
            *("__delitem__", "__call__", "__enter__", "__neg__", "__pos__", "__abs__"),
            *("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__"),
            *("__pow__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__and__"),
            *("__or__", "__xor__"),
        )
    },
}


# Builtin value types a candidate class may derive from: its instances carry the builtin
# value by value (a `str` subclass is that text here), the rest of them is forwarded.
VALUE_BASES = (str, int, float, bytes)


def value_base(cls: type) -> type | None:
    """The builtin value type among `cls`'s bases, if any."""
    return next((b for b in cls.__mro__ if b in VALUE_BASES), None)


def _structural_eq(self: Any, other: Any) -> Any:
    if type(other) is not type(self):
        return NotImplemented
    if self is other:
        return True
    base = value_base(type(self))
    if base is not None and base.__eq__(self, other) is not True:
        return False
    side = _side(type(self))
    return side.state(self) == side.state(other)


def _structural_ne(self: Any, other: Any) -> Any:
    equal = _structural_eq(self, other)
    return equal if equal is NotImplemented else not equal


def _structural_hash(self: Any) -> int:
    base = value_base(type(self))
    value = base.__hash__(self) if base is not None else None
    return hash((value, _frozen(_side(type(self)).state(self))))


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return frozenset((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(_frozen(v) for v in value)
    return value


def _text(self: BaseException) -> str:
    text = vars(self).get("_boundary_text")
    return text if type(text) is str else BaseException.__str__(self)


# --- generation -------------------------------------------------------------------------------


def _name(qualname: str) -> str:
    name = qualname.rpartition(".")[2]
    return name if name.isidentifier() and not keyword.iskeyword(name) else "Candidate"


def meta_key(meta: Any) -> tuple[str, str, str]:
    if type(meta) is not dict:
        raise codec.CodecError("a malformed class arrived")
    module, qualname, kind = meta.get("module"), meta.get("qualname"), meta.get("kind")
    if type(module) is not str or type(qualname) is not str or kind not in _KINDS:
        raise codec.CodecError("a malformed class arrived")
    return module[:200], qualname[:200], kind


def generate(side: Any, key: tuple[str, str, str], meta: dict) -> type:
    """A new test-side class for the candidate class `meta` describes."""
    module, qualname, kind = key
    bases = [side.base_class(b) for b in codec_list(meta.get("bases"))[:16]]
    bases = [b for b in bases if b is not None]
    ops = [n for n in codec_list(meta.get("ops")) if n in FORWARDERS]
    doc = meta.get("doc") if type(meta.get("doc")) is str else None
    ns: dict[str, Any] = {"__module__": module, "__qualname__": qualname, "__doc__": doc}
    ns |= {"_boundary_key": key, "_boundary_side": side}
    members = meta.get("members") if type(meta.get("members")) is dict else {}
    ns["_boundary_members"] = {k: v for k, v in members.items() if type(k) is str}
    build = {
        "exception": _exception_class,
        "dataclass": _dataclass,
        "tuple": _tuple_class,
        "enum": _enum_class,
    }.get(kind, _plain_class)
    cls = build(side, qualname, bases, ns, ops, meta)
    return cls


def codec_list(value: Any) -> list:
    return value if type(value) is list else []


def _exception_class(side: Any, qualname: str, bases: list, ns: dict, ops: list, meta: dict):
    found = [b for b in bases if isinstance(b, type) and issubclass(b, Exception)]
    found = [b for b in found if not any(o is not b and issubclass(o, b) for o in found)]
    if "__str__" in ops:
        ns["__str__"] = _text
    for candidate in (tuple(found) or (Exception,), tuple(found[:1]), (Exception,)):
        try:
            return RemoteMeta(_name(qualname), candidate or (Exception,), ns)
        except TypeError:
            continue
    return RemoteMeta(_name(qualname), (Exception,), ns)


def _dataclass(side: Any, qualname: str, bases: list, ns: dict, ops: list, meta: dict):
    names = codec.field_names(meta.get("fields"))
    params = codec_list(meta.get("params"))
    _, order, frozen, unsafe_hash = ([*params, False, False, False, False])[:4]
    for op in ("__str__", "__repr__"):
        if op in ops:
            ns[op] = FORWARDERS[op]
    others = tuple(b for b in bases if isinstance(b, type) and issubclass(b, RemoteRecord))
    for chosen in (others, ()):
        try:
            cls = dataclasses.make_dataclass(
                _name(qualname),
                names,
                bases=chosen or (RemoteRecord,),
                namespace={**ns, "__module__": __name__},
                eq=True,
                order=order is True,
                frozen=frozen is True,
                unsafe_hash=unsafe_hash is True,
            )
            break
        except (TypeError, ValueError):
            continue
    type.__setattr__(cls, "__module__", ns["__module__"])
    type.__setattr__(cls, "__qualname__", qualname)
    return cls


def _tuple_class(side: Any, qualname: str, bases: list, ns: dict, ops: list, meta: dict):
    import collections

    names = codec.field_names(meta.get("fields"))
    cls = collections.namedtuple(_name(qualname), names, module=ns["__module__"])  # type: ignore[misc]
    cls.__qualname__ = qualname
    cls._boundary_key = ns["_boundary_key"]  # type: ignore[attr-defined]
    return cls


def _enum_class(side: Any, qualname: str, bases: list, ns: dict, ops: list, meta: dict):
    pairs = codec_list(meta.get("fields"))
    if any(type(p) is not list or len(p) != 2 for p in pairs):
        raise codec.CodecError("a malformed enum arrived")
    names = codec.field_names([p[0] for p in pairs])
    values = [codec.decode(p[1], side) for p in pairs]
    mixin = {"int": int, "str": str}.get(meta.get("base"))
    flag = next((b for b in bases if isinstance(b, type) and issubclass(b, enum.Flag)), None)
    base = flag if flag is not None else enum.Enum
    cls = base(_name(qualname), list(zip(names, values, strict=True)), module=ns["__module__"],
               type=mixin if flag is None else None)  # fmt: skip
    cls.__qualname__ = qualname
    type.__setattr__(cls, "_boundary_key", ns["_boundary_key"])
    return cls


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    """A local instance of a class the tests derived: the candidate's __init__ runs with it."""
    if ref_of(self) is None:
        owner = _owner(type(self))
        _side(owner).class_request(owner, "init", (self, *args), kwargs)


def _remote_signature(self: Any) -> inspect.Signature | None:
    """A callable object's signature, as the candidate's `inspect.signature` reads it."""
    ref = ref_of(self)
    if ref is None:
        raise AttributeError("__signature__")
    side = ref[0]
    found = side.request("sig", h=side.current_id(ref))[0]
    if type(found) is not list or len(found) != 2:
        return None
    return _signature(side, found[0], found[1])


def _plain_class(side: Any, qualname: str, bases: list, ns: dict, ops: list, meta: dict):
    for op in ops:
        ns[op] = FORWARDERS[op]
    if "__call__" in ops:
        ns["__signature__"] = property(_remote_signature)
    if meta.get("init"):
        ns["__init__"] = _init
    # Here, not only inherited: a C base (tzinfo) has attribute slots of its own that
    # would come first in the MRO.
    for name in ("__getattribute__", "__getattr__", "__setattr__", "__delattr__"):
        ns[name] = vars(RemoteObject)[name]
    if meta.get("eq"):
        ns["__eq__"], ns["__ne__"] = _structural_eq, _structural_ne
        ns["__hash__"] = _structural_hash if meta.get("hashable") else None
    local = [b for b in bases if not isinstance(b, RemoteMeta)]
    remote = [b for b in bases if isinstance(b, RemoteMeta) and issubclass(b, RemoteObject)]
    for chosen in ([*remote, *local], remote):
        full = tuple(chosen) if remote else (*chosen, RemoteObject)
        try:
            meta_cls = _metaclass(full)
            cls = meta_cls(_name(qualname), full, ns)
            if getattr(cls, "__abstractmethods__", None):
                cls.__abstractmethods__ = frozenset()  # type: ignore[attr-defined]
            return cls
        except TypeError:
            continue
    return RemoteMeta(_name(qualname), (RemoteObject,), ns)


def _metaclass(bases: tuple) -> type:
    winner: type = RemoteMeta
    for base in bases:
        kind = type(base)
        if issubclass(winner, kind):
            continue
        if issubclass(kind, winner):
            winner = kind
            continue
        winner = type("RemoteMeta", (RemoteMeta, kind), {})
    return winner


def load_pickled(module: str, data: bytes) -> Any:
    """Unpickling a candidate object: the candidate loads the bytes it made."""
    side = ACTIVE[-1]
    return side.request("load", h=side.module_id(module), a=[codec.encode(data, side)])[0]


def new_proxy(cls: type, value: Any = None) -> Any:
    """An empty instance of a generated class (a C base such as tzinfo makes its own); one
    of a class derived from a builtin value type holds `value`, of exactly that type."""
    base = value_base(cls)
    if base is not None:
        if type(value) is not base:
            raise codec.CodecError(f"a {cls.__qualname__} arrived without its {base.__name__}")
        return base.__new__(cls, value)
    try:
        return object.__new__(cls)
    except TypeError:
        solid = next(k for k in cls.__mro__ if "__new__" in vars(k) and k is not object)
        return solid.__new__(cls)


def make_function(side: Any, meta: dict, target: tuple, call: Any = None) -> Any:
    """A real function forwarding its calls to the other side's (`call`, by default the
    test side's `function_call`); `target` is what `side.function_id` re-finds it by."""
    call = call or side.function_call

    def forward(*args: Any, **kwargs: Any) -> Any:
        return call(target, args, kwargs)

    qualname = str(meta.get("qualname") or "function")[:200]
    forward.__name__ = _name(qualname) if qualname.rpartition(".")[2] != "<lambda>" else "<lambda>"
    forward.__qualname__ = qualname
    forward.__module__ = str(meta.get("module") or "")[:200]
    forward.__doc__ = meta.get("doc") if type(meta.get("doc")) is str else None
    signature = _signature(side, meta.get("params"), meta.get("returns"))
    if signature is not None:
        forward.__signature__ = signature  # type: ignore[attr-defined]
    return forward


def params_of(side: Any, fn: Any) -> list | None:
    """A function's parameters as [name, kind, default (a value node), annotation text]."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    out = []
    for p in signature.parameters.values():
        default = None
        if p.default is not p.empty:
            try:
                default = codec.encode(p.default, side)
            except (codec.CodecError, RecursionError):
                default = ["v", repr(p.default)[:200]]
        note = None if p.annotation is p.empty else _annotation(p.annotation)
        out.append([p.name, int(p.kind), default, note])
    return out


def returns_of(fn: Any) -> str | None:
    try:
        note = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return None
    return None if note is inspect.Signature.empty else _annotation(note)


def _annotation(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, type):
        return value.__qualname__ if value.__module__ == "builtins" else value.__name__
    return repr(value)[:200]


class _Default:
    """A default value that could not cross, shown by the candidate's repr of it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class _Note:
    """An annotation, shown as the candidate wrote it."""

    def __init__(self, text: str) -> None:
        self.text = text[:200]

    def __repr__(self) -> str:
        return self.text


def _signature(side: Any, params: Any, returns: Any) -> inspect.Signature | None:
    if type(params) is not list:
        return None
    try:
        out = []
        for entry in params[:64]:
            name, kind, default, note = entry
            value = inspect.Parameter.empty
            if default is not None:
                try:
                    value = codec.decode(default, side)
                except codec.CodecError:
                    value = _Default("...")
            annotation = _Note(note) if type(note) is str else inspect.Parameter.empty
            out.append(inspect.Parameter(name, inspect._ParameterKind(kind), default=value,
                                         annotation=annotation))  # fmt: skip
        note = _Note(returns) if type(returns) is str else inspect.Signature.empty
        return inspect.Signature(out, return_annotation=note)
    except (TypeError, ValueError):
        return None


__all__ = ["FORWARDERS", "RemoteMeta", "RemoteObject", "RemoteRecord", "generate", "ref_of"]
