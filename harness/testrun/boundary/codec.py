"""Values across the boundary: a strict, JSON-based codec that checks every type exactly.

A value crosses by value only when its type is exactly a builtin (checked with `type(x) is`,
never isinstance), a container of such values, a dataclass / named tuple / enum instance (as a
structural record of its fields, with a reference to its class), or one of a fixed allow-list
of standard-library value types rebuilt from their fields (`slice`, `range`, paths and
`argparse.Namespace` among them). Classes and functions cross as class and function nodes
(`Hooks.class_ref`, `Hooks.function_node`); anything else crosses as a handle. The receiver
rebuilds records from classes it makes itself or already owns, so a sender's `__eq__`,
`__hash__`, `__bool__` or metaclass never reaches the other side. Names that cross (fields,
members) are identifiers checked against one rule (`field_names`). Not pickle or marshal:
decoding reads nothing but tagged JSON lists. Standard library only (copied into the sandbox).
"""

from __future__ import annotations

import argparse
import base64
import collections
import dataclasses
import datetime as dt
import decimal
import enum
import fractions
import json
import keyword
import math
import pathlib
import types
import uuid
import zoneinfo
from typing import Any

MAX_DEPTH = 200
_BIG = 1 << 62
# defaultdict factories that cross by name: builtins. Any other factory crosses as the sender's
# function or handle, so calling it runs the sender's code in the sender's process.
_FACTORIES = {f.__name__: f for f in (list, dict, set, int, str, float, tuple, frozenset, bool)}
_KEYS, _VALUES, _ITEMS = type({}.keys()), type({}.values()), type({}.items())
_PATHS = {pathlib.PosixPath: "p", pathlib.PurePosixPath: "pp"}
# Stdlib attribute bags compared by their attributes (`Namespace(a=1) == Namespace(a=1)`).
_BAGS = {argparse.Namespace: "a", types.SimpleNamespace: "s"}
_BAG_CLASSES = {tag: cls for cls, tag in _BAGS.items()}
FUNCTIONS = (
    types.FunctionType,
    types.MethodType,
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
)


class CodecError(Exception):
    """A value that cannot cross (a cycle, too deep) or a message that is not well formed."""


class CarryError(CodecError):
    """A value of this side the boundary cannot carry (a cycle, nested too deep): when the
    tests' value, the test's failure is the boundary's, not the candidate's."""


# The prefix of the names the test side's generated classes keep their own state under.
RESERVED_PREFIX = "_boundary"


def field_names(names: Any) -> tuple[str, ...]:
    """Record field and member names: identifiers, no keyword, no dunder (`__x`), no sunder
    (`_x_`, enum's hooks), none under the prefix a generated class keeps its state in; so a
    field or member never replaces generated code with a value the sender chose."""
    ok = type(names) is list and all(type(n) is str and n.isidentifier() for n in names)
    if not ok or len(set(names)) != len(names):
        raise CodecError("a record's field names are not identifiers")
    for n in names:
        sunder = len(n) > 2 and n[0] == n[-1] == "_"
        if keyword.iskeyword(n) or n.startswith(("__", RESERVED_PREFIX)) or sunder:
            raise CodecError(f"a record field or member may not be named {n[:40]!r}")
    return tuple(names)


class Hooks:
    """What a side supplies: how its objects become handles, how classes, handles and records
    come back.

    The defaults refer to classes by module and qualified name and make mirror classes for
    records (cached, so equal records are equal and enum members are identical); they refuse
    handles, classes and functions. wire.Side overrides them."""

    def __init__(self) -> None:
        self._classes: dict[tuple, type] = {}

    def is_support(self, module: str) -> bool:
        return False

    def export(self, value: Any) -> list:
        raise CodecError(f"a {type(value).__name__} cannot cross by value")

    def handle(self, node: list) -> Any:
        raise CodecError("a handle arrived where none can be")

    def exception(self, node: list) -> BaseException:
        raise CodecError("an exception arrived where none can be")

    def exception_node(self, value: BaseException, encoder: Any, depth: int) -> list:
        return self.export(value)

    def class_ref(self, cls: type) -> list:
        """How a record's class is named in its node."""
        return ["b", cls.__module__, cls.__qualname__]

    def class_value(self, cls: type) -> list:
        """A class sent as a value (`mod.Error`, `type(x)`)."""
        return self.export(cls)

    def function_node(self, fn: Any) -> list:
        return self.export(fn)

    def class_node(self, node: list) -> Any:
        raise CodecError("a class arrived where none can be")

    def function(self, node: list) -> Any:
        raise CodecError("a function arrived where none can be")

    def live(self, node: list, value: Any) -> Any:
        """A module-level container of the other side: by default, its value."""
        return value

    def named(self, ref: Any) -> tuple[str, str]:
        """(module, qualname) of a `["b", module, qualname]` reference."""
        if type(ref) is not list or len(ref) != 3 or ref[0] != "b":
            raise CodecError("a malformed class reference arrived")
        return _str(ref[1]), _str(ref[2])

    def record_class(self, ref: Any, names: tuple, frozen: bool) -> type:
        module, qualname = self.named(ref)
        key = ("dc", module, qualname, names, frozen)
        if key not in self._classes:
            # Built as this module's class, then renamed: dataclasses compiles its methods
            # with the globals of `sys.modules[cls.__module__]`, and the sender's module may
            # be the boundary's stand-in for the candidate, which is no dict of globals.
            cls = dataclasses.make_dataclass(
                _ident(qualname), names, eq=True, frozen=frozen, namespace={"__module__": __name__}
            )
            cls.__module__, cls.__qualname__ = module, qualname
            self._classes[key] = cls
        return self._classes[key]

    def tuple_class(self, ref: Any, names: tuple) -> type:
        module, qualname = self.named(ref)
        key = ("nt", module, qualname, names)
        if key not in self._classes:
            cls = collections.namedtuple(_ident(qualname), names, module=module)  # type: ignore[misc]
            cls.__qualname__ = qualname
            self._classes[key] = cls
        return self._classes[key]

    def enum_member(self, ref: Any, base: str, members: list, name: str) -> Any:
        module, qualname = self.named(ref)
        return mirror_enum(self._classes, module, qualname, base, members, name)


def mirror_enum(
    cache: dict, module: str, qualname: str, base: str, members: list, name: str
) -> Any:
    """The member `name` of a mirror enum made from (name, value) pairs, cached by shape."""
    key = ("en", module, qualname, base, tuple((n, repr(v)) for n, v in members))
    if key not in cache:
        mixin = {"int": int, "str": str}.get(base)
        cls = enum.Enum(_ident(qualname), members, module=module, type=mixin)
        cls.__qualname__ = qualname
        cache[key] = cls
    try:
        return cache[key][name]
    except KeyError:
        raise CodecError(f"enum {qualname} has no member {name!r}") from None


def _ident(qualname: str) -> str:
    name = qualname.rpartition(".")[2]
    return name if name.isidentifier() and not keyword.iskeyword(name) else "Record"


# --- encoding -------------------------------------------------------------------------------


def encode(value: Any, hooks: Hooks) -> Any:
    """`value` as tagged JSON lists; raises CodecError for a cycle or a value nested too deep."""
    return _Encoder(hooks).enc(value, 0)


class _Encoder:
    def __init__(self, hooks: Hooks) -> None:
        self.hooks, self.path = hooks, set()

    def many(self, values: Any, depth: int) -> list:
        return [self.enc(v, depth + 1) for v in values]

    def pairs(self, items: Any, depth: int) -> list:
        return [[self.enc(k, depth + 1), self.enc(v, depth + 1)] for k, v in items]

    def enc(self, value: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise CarryError(f"a value nested deeper than {MAX_DEPTH} levels cannot cross")
        t = type(value)
        if value is None or t is bool or t is str:
            return ["v", value]
        if t is int:
            return ["i", value if -_BIG < value < _BIG else hex(value)]
        if t is float:
            return ["f", value if math.isfinite(value) else repr(value)]
        scalar = _scalar(value, t)
        if scalar is not None:
            return scalar
        if id(value) in self.path:
            raise CarryError("a value that contains itself (a cycle) cannot cross the boundary")
        self.path.add(id(value))
        try:
            return self.compound(value, t, depth)
        finally:
            self.path.discard(id(value))

    def compound(self, value: Any, t: type, depth: int) -> Any:
        if t is list or t is tuple or t is set or t is frozenset or t is collections.deque:
            tag = {list: "l", tuple: "t", set: "s", frozenset: "z", collections.deque: "q"}[t]
            node = [tag, self.many(value, depth)]
            if t is set or t is frozenset:
                # A set's iteration order depends on the hash seed and on insertion history;
                # its encoding must not, or one value would cross as different texts.
                node[1].sort(key=_canonical)
            return [*node, value.maxlen] if t is collections.deque else node
        if t is dict or t is collections.OrderedDict or t is collections.Counter:
            return [
                {dict: "d", collections.OrderedDict: "o", collections.Counter: "c"}[t],
                self.pairs(value.items(), depth),
            ]
        if t is collections.defaultdict:
            name = _factory_name(value.default_factory)
            factory = name if name is not None else self.enc(value.default_factory, depth + 1)
            return ["dd", factory, self.pairs(value.items(), depth)]
        if t is _KEYS or t is _VALUES:
            return ["vk" if t is _KEYS else "vv", self.many(value, depth)]
        if t is _ITEMS:
            return ["vi", self.pairs(value, depth)]
        if t is dt.datetime or t is dt.time:
            return self.clock(value, t, depth)
        if t is dt.timezone:
            return ["tz", self.enc(value.utcoffset(None), depth + 1), value.tzname(None)]
        if t is slice:
            return ["sl", self.many((value.start, value.stop, value.step), depth)]
        if t in _BAGS and _bag_names(value) is not None:
            names = _bag_names(value)
            values = [self.enc(vars(value)[n], depth + 1) for n in names]
            return ["ns", _BAGS[t], names, values]
        if isinstance(value, type):
            return self.hooks.class_value(value)
        if t in FUNCTIONS:
            return self.hooks.function_node(value)
        return self.record(value, t, depth)

    def clock(self, value: Any, t: type, depth: int) -> list:
        if t is dt.datetime:
            fields = [value.year, value.month, value.day, value.hour, value.minute]
        else:
            fields = [value.hour, value.minute]
        fields += [value.second, value.microsecond, value.fold]
        tag = "dt" if t is dt.datetime else "tm"
        return [tag, fields, self.enc(value.tzinfo, depth + 1)]

    def record(self, value: Any, t: type, depth: int) -> list:
        hooks = self.hooks
        if isinstance(t, type) and dataclasses.is_dataclass(t):
            frozen = t.__dataclass_params__.frozen  # type: ignore[attr-defined]
            if frozen or not hooks.is_support(t.__module__):  # support objects are handles
                fields = [f.name for f in dataclasses.fields(t)]
                values = [self.enc(object.__getattribute__(value, n), depth + 1) for n in fields]
                return ["dc", hooks.class_ref(t), fields, values, frozen]
        bases = t.__bases__ if isinstance(t, type) else ()
        if len(bases) == 1 and bases[0] is tuple and type(t.__dict__.get("_fields")) is tuple:
            fields = list(t._fields)  # type: ignore[attr-defined]
            values = self.many(tuple.__iter__(value), depth)
            return ["nt", hooks.class_ref(t), fields, values]
        if isinstance(t, enum.EnumMeta) and t.__members__:
            return self.member(value, t, depth)
        if isinstance(value, BaseException):
            return hooks.exception_node(value, self, depth)
        return hooks.export(value)

    def member(self, value: Any, t: type, depth: int) -> list:
        base = "int" if issubclass(t, int) else "str" if issubclass(t, str) else ""
        members = [
            [n, self.enc(m.value, depth + 1)] for n, m in t.__members__.items() if n == m.name
        ]
        return ["en", self.hooks.class_ref(t), base, members, value.name]


def _bag_names(value: Any) -> list | None:
    """A namespace's attribute names, if each passes the field rule (else it is a handle)."""
    names = list(vars(value))
    try:
        field_names(names)
    except CodecError:
        return None
    return names


def _canonical(node: Any) -> str:
    return json.dumps(node, sort_keys=True)


def _factory_name(factory: Any) -> str | None:
    if factory is None:
        return ""
    name = getattr(factory, "__name__", None)
    return name if _FACTORIES.get(name) is factory else None


def _scalar(value: Any, t: type) -> list | None:
    if t is bytes or t is bytearray:
        return ["y" if t is bytes else "Y", base64.b64encode(value).decode()]
    if t is complex:
        return ["j", [repr(value.real), repr(value.imag)]]
    if t is decimal.Decimal:
        return ["dec", str(value)]
    if t is fractions.Fraction:
        return ["fr", hex(value.numerator), hex(value.denominator)]
    if t is uuid.UUID:
        return ["uuid", value.hex]
    if t is dt.date:
        return ["da", [value.year, value.month, value.day]]
    if t is dt.timedelta:
        return ["td", [value.days, value.seconds, value.microseconds]]
    if t is zoneinfo.ZoneInfo:
        return ["zi", value.key]
    if t is range:
        return ["rg", [value.start, value.stop, value.step]]
    if t in _PATHS:
        return ["pa", _PATHS[t], str(value)]
    return None


# --- decoding -------------------------------------------------------------------------------


def decode(tree: Any, hooks: Hooks) -> Any:
    """The value a tagged tree stands for, built only from classes this side owns."""
    try:
        return _dec(tree, hooks, 0)
    except CodecError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, ArithmeticError) as exc:
        raise CodecError(f"a malformed value arrived: {type(exc).__name__}: {exc}") from None


def _int(x: Any) -> int:
    if type(x) is int:
        return x
    if type(x) is str and len(x) < 20_000:
        return int(x, 16)
    raise CodecError("a malformed integer arrived")


def _float(x: Any) -> float:
    if type(x) is float or type(x) is int:
        return float(x)
    if type(x) is str and x in ("nan", "inf", "-inf"):
        return float(x)
    raise CodecError("a malformed float arrived")


def _ints(x: Any, n: int) -> list[int]:
    if type(x) is not list or len(x) != n or any(type(i) is not int for i in x):
        raise CodecError("malformed fields arrived")
    return x


def _str(x: Any) -> str:
    if type(x) is not str:
        raise CodecError("a malformed name arrived")
    return x


_SIMPLE = {
    "y": lambda n, h, d: base64.b64decode(_str(n[1]), validate=True),
    "Y": lambda n, h, d: bytearray(base64.b64decode(_str(n[1]), validate=True)),
    "j": lambda n, h, d: complex(_float(float(_str(n[1][0]))), _float(float(_str(n[1][1])))),
    "dec": lambda n, h, d: decimal.Decimal(_str(n[1])),
    "fr": lambda n, h, d: fractions.Fraction(_int(n[1]), _int(n[2])),
    "uuid": lambda n, h, d: uuid.UUID(hex=_str(n[1])),
    "da": lambda n, h, d: dt.date(*_ints(n[1], 3)),
    "td": lambda n, h, d: dt.timedelta(*_ints(n[1], 3)),
    "zi": lambda n, h, d: zoneinfo.ZoneInfo(_str(n[1])),
    "rg": lambda n, h, d: range(*_ints(n[1], 3)),
    "pa": lambda n, h, d: {"p": pathlib.PosixPath, "pp": pathlib.PurePosixPath}[n[1]](_str(n[2])),
}


def _dec(node: Any, hooks: Hooks, depth: int) -> Any:
    if depth > MAX_DEPTH + 2:
        raise CodecError(f"a value nested deeper than {MAX_DEPTH} levels arrived")
    if type(node) is not list or not node or type(node[0]) is not str:
        raise CodecError("a malformed value arrived (not a tagged list)")
    tag = node[0]

    def many(items: Any) -> list:
        if type(items) is not list:
            raise CodecError("a malformed container arrived")
        return [_dec(i, hooks, depth + 1) for i in items]

    def pairs(items: Any) -> list:
        if type(items) is not list or any(type(p) is not list or len(p) != 2 for p in items):
            raise CodecError("a malformed mapping arrived")
        return [(_dec(k, hooks, depth + 1), _dec(v, hooks, depth + 1)) for k, v in items]

    if tag == "v":
        value = node[1]
        if value is None or type(value) is bool or type(value) is str:
            return value
        raise CodecError("a malformed scalar arrived")
    if tag == "i":
        return _int(node[1])
    if tag == "f":
        return _float(node[1])
    if tag in _SIMPLE:
        return _SIMPLE[tag](node, hooks, depth)
    if tag in ("l", "t", "s", "z"):
        items = many(node[1])
        return {"l": list, "t": tuple, "s": set, "z": frozenset}[tag](items)
    if tag == "q":
        maxlen = node[2]
        if maxlen is not None and type(maxlen) is not int:
            raise CodecError("a malformed deque arrived")
        return collections.deque(many(node[1]), maxlen)
    if tag in ("d", "o", "c"):
        kind = {"d": dict, "o": collections.OrderedDict, "c": collections.Counter}[tag]
        return kind(pairs(node[1])) if tag != "c" else collections.Counter(dict(pairs(node[1])))
    if tag == "dd":
        if type(node[1]) is list:  # the sender's own factory: a function or handle, forwarded
            factory = _dec(node[1], hooks, depth + 1)
            if not callable(factory):
                raise CodecError("a defaultdict whose factory cannot be called arrived")
        else:
            factory = _FACTORIES.get(_str(node[1])) if node[1] else None
            if node[1] and factory is None:
                raise CodecError("a defaultdict with a factory that is not a builtin arrived")
        return collections.defaultdict(factory, pairs(node[2]))
    if tag == "vk":
        return dict.fromkeys(many(node[1])).keys()
    if tag == "vv":
        return dict(enumerate(many(node[1]))).values()
    if tag == "vi":
        return dict(pairs(node[1])).items()
    if tag == "sl":
        return slice(*many(node[1])[:3])
    if tag in ("dt", "tm"):
        tz = _dec(node[2], hooks, depth + 1)
        if tz is not None and not isinstance(tz, dt.tzinfo):
            raise CodecError("a time zone that is not a tzinfo arrived")
        fields = _ints(node[1], 8 if tag == "dt" else 5)
        *parts, fold = fields
        cls = dt.datetime if tag == "dt" else dt.time
        return cls(*parts, tzinfo=tz, fold=fold)
    if tag == "tz":
        offset = _dec(node[1], hooks, depth + 1)
        if type(offset) is not dt.timedelta:
            raise CodecError("a malformed timezone arrived")
        return dt.timezone(offset, _str(node[2]))
    return _dec_record(node, hooks, depth, many)


def _dec_record(node: list, hooks: Hooks, depth: int, many: Any) -> Any:
    tag = node[0]
    if tag == "dc":
        _, ref, names, values, frozen = node
        names = field_names(names)
        values = many(values)
        if len(values) != len(names) or type(frozen) is not bool:
            raise CodecError("a malformed record arrived")
        cls = hooks.record_class(ref, names, frozen)
        obj = object.__new__(cls)
        for name, value in zip(names, values, strict=True):
            object.__setattr__(obj, name, value)
        return obj
    if tag == "nt":
        _, ref, names, values = node
        names, values = field_names(names), many(values)
        if len(values) != len(names):
            raise CodecError("a malformed named tuple arrived")
        return hooks.tuple_class(ref, names)(*values)
    if tag == "en":
        _, ref, base, members, name = node
        if type(members) is not list or base not in ("", "int", "str"):
            raise CodecError("a malformed enum arrived")
        decoded = [(_str(m[0]), _dec(m[1], hooks, depth + 1)) for m in members]
        field_names([n for n, _ in decoded])
        return hooks.enum_member(ref, base, decoded, _str(name))
    if tag in ("h", "r"):
        return hooks.handle(node)
    if tag == "ns":
        _, kind, names, values = node
        names, values = field_names(names), many(values)
        if kind not in _BAG_CLASSES or len(values) != len(names):
            raise CodecError("a malformed namespace arrived")
        return _BAG_CLASSES[kind](**dict(zip(names, values, strict=True)))
    if tag == "lv":
        return hooks.live(node, _dec(node[3], hooks, depth + 1))
    if tag in ("k", "b"):
        return hooks.class_node(node)
    if tag == "fn":
        return hooks.function(node)
    if tag == "x":
        return hooks.exception(node)
    raise CodecError(f"an unknown value tag {tag[:20]!r} arrived")
