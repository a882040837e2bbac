"""Tests of the boundary's codec: honest values round-trip equal, nothing else is trusted."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import decimal
import enum
import fractions
import json
import uuid
import zoneinfo
from typing import Any, ClassVar, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.testrun.boundary import candidate, codec, proxy, wire

HERE = __name__


@dataclasses.dataclass(frozen=True)
class Point:
    x: Any
    y: Any


@dataclasses.dataclass
class Box:
    items: Any


class Pair(NamedTuple):
    left: Any
    right: Any


class Colour(enum.Enum):
    RED = 1
    GREEN = "g"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Opaque:
    """A plain object: crosses as a handle."""


def sides(support: bool = True) -> tuple[wire.Side, wire.Side]:
    """Two ends with no socket between them: `a` (the candidate's) encodes and exports, `b`
    (the tests') decodes."""
    names = frozenset({HERE}) if support else frozenset()
    tests = proxy.TestSide(None, names)
    tests.sock = object()  # type: ignore[assignment]  # stands for a live connection
    return candidate.CandidateSide(None, names), tests


def through(a: wire.Side, b: wire.Side, value: Any) -> Any:
    """As the wire carries it: encoded by `a`, JSON text, decoded by `b`."""
    return codec.decode(wire.loads(wire.dumps(codec.encode(value, a))), b)


def there_and_back(value: Any, support: bool = True) -> Any:
    a, b = sides(support)
    return through(b, a, through(a, b, value))


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**70, max_value=2**90),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.text(st.characters(categories=["Cs", "Lo", "Nd"]), max_size=6),  # lone surrogates too
    st.binary(max_size=20),
    st.complex_numbers(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.fractions(),
    st.uuids(),
    st.dates(),
    st.times(),
    st.timedeltas(),
    st.datetimes(
        timezones=st.sampled_from(
            [
                None,
                dt.UTC,
                dt.timezone(dt.timedelta(hours=-3), "X"),
                zoneinfo.ZoneInfo("Asia/Tokyo"),
            ]
        )
    ),
    st.sampled_from([Colour.RED, Colour.GREEN, Level.LOW, Level.HIGH]),
    st.builds(Opaque),
)
hashables = st.one_of(st.integers(), st.text(max_size=8), st.booleans(), st.uuids(), st.dates())


def _containers(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(hashables, children, max_size=4),
        st.sets(hashables, max_size=4),
        st.frozensets(hashables, max_size=4),
        st.lists(children, max_size=4).map(collections.deque),
        st.dictionaries(hashables, children, max_size=4).map(collections.OrderedDict),
        st.dictionaries(hashables, st.integers(), max_size=4).map(collections.Counter),
        st.dictionaries(hashables, children, max_size=4).map(
            lambda d: collections.defaultdict(list, d)
        ),
        st.builds(Point, children, children),
        st.builds(Box, children),
        st.builds(Pair, children, children),
    )


values = st.recursive(scalars, _containers, max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(values)
def test_honest_values_round_trip_equal(value: Any) -> None:
    """Any nesting of builtins, records, the stdlib allow-list and handles comes back equal."""
    back = there_and_back(value)

    assert (back, type(back)) == (value, type(value))


@settings(max_examples=100, deadline=None)
@given(values)
def test_records_of_a_class_the_receiver_lacks_are_mirrored_field_for_field(value: Any) -> None:
    """Without the sender's classes, records are rebuilt as classes made by the receiver,
    which go back as the sender's own, field for field."""
    a, b = sides(support=False)

    mirrored = through(a, b, value)

    assert through(b, a, mirrored) == value or _has_handle(value)


def _has_handle(value: Any) -> bool:
    return "Opaque" in json.dumps(codec.encode(value, sides()[0]))


def test_handles_keep_identity_and_compare_by_it_only() -> None:
    """One object sent twice is one handle; two objects are two handles, never equal."""
    a, b = sides()
    one, two = Opaque(), Opaque()

    h1, h1_again, h2 = through(a, b, one), through(a, b, one), through(a, b, two)

    assert (h1 is h1_again, h1 == h2, h1 == h1, isinstance(h1, wire.Handle)) == (
        True,
        False,
        True,
        True,
    )


class Spy:
    """Counts calls of the methods a hostile class overrides."""

    calls: ClassVar[list[str]] = []


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        Spy.calls.append("eq")
        return True

    def __hash__(self) -> int:
        Spy.calls.append("hash")
        return 0

    def __bool__(self) -> bool:
        Spy.calls.append("bool")
        return False


class Meta(type):
    def __eq__(cls, other: object) -> bool:
        Spy.calls.append("meta eq")
        return True

    def __instancecheck__(cls, obj: object) -> bool:
        Spy.calls.append("instancecheck")
        return True

    __hash__ = type.__hash__


class WithMeta(metaclass=Meta):
    def __eq__(self, other: object) -> bool:
        Spy.calls.append("eq")
        return True

    __hash__ = object.__hash__


@dataclasses.dataclass(eq=False)
class LyingRecord:
    value: int

    def __eq__(self, other: object) -> bool:
        Spy.calls.append("eq")
        return True

    def __bool__(self) -> bool:
        Spy.calls.append("bool")
        return False

    __hash__ = object.__hash__


class Truthy:
    def __bool__(self) -> bool:
        Spy.calls.append("bool")
        return True


class TruthyEq:
    def __eq__(self, other: object) -> Any:
        Spy.calls.append("eq")
        return Truthy()

    __hash__ = object.__hash__


hostile = st.sampled_from([AlwaysEqual, WithMeta, TruthyEq]).map(lambda c: c()) | st.builds(
    LyingRecord, st.integers()
)


@settings(max_examples=100, deadline=None)
@given(hostile, st.one_of(st.integers(), st.text(max_size=5), st.none()))
def test_objects_with_their_own_eq_bool_hash_or_metaclass_are_never_asked(
    value: Any, other: Any
) -> None:
    """A class's own __eq__ or metaclass never decides a comparison on the receiving side: it
    crosses as a structural record or as a proxy compared by state."""
    a, b = sides(support=False)
    got = through(a, b, [value])[0]
    Spy.calls.clear()

    verdict = got == other

    assert (Spy.calls, verdict, type(got).__eq__ is not type(value).__eq__) == ([], False, True)


def test_a_cycle_is_a_clear_error() -> None:
    """A list that holds itself is refused with words, not a RecursionError."""
    loop: list = []
    loop.append(loop)

    with pytest.raises(codec.CodecError, match="cycle"):
        codec.encode(loop, sides()[0])


def test_shared_values_are_not_cycles() -> None:
    """The same list twice in one value is not a cycle: it crosses as two equal copies."""
    shared = [1, 2]

    back = there_and_back([shared, shared])

    assert back == [[1, 2], [1, 2]]


def test_a_malformed_tree_is_a_codec_error() -> None:
    """What a hostile sender can write decodes to a CodecError, never to anything else."""
    _, b = sides()
    bad = [
        ["l", "x"],
        ["dc", "m", "q", ["__class__"], [["v", 1]], True],
        ["zz"],
        {"a": 1},
        ["i", 1.5],
    ]

    errors = []
    for tree in bad:
        with pytest.raises(codec.CodecError):
            codec.decode(tree, b)
        errors.append(True)

    assert errors == [True] * len(bad)


def test_a_defaultdict_with_the_senders_factory_keeps_it_as_a_forwarded_function() -> None:
    """A builtin factory crosses by name; any other crosses as the sender's function, made
    on the receiving side (its calls are forwarded to the sender): never the sender's object
    itself, and the items cross by value."""
    a, b = sides()

    def factory() -> int:
        return 0

    got = through(a, b, collections.defaultdict(factory, {"k": 1}))

    assert (type(got), dict(got), got.default_factory is factory) == (
        collections.defaultdict,
        {"k": 1},
        False,
    )
    assert got.default_factory.__name__ == "factory"


def test_stdlib_values_are_rebuilt_by_exact_type() -> None:
    """Decimal, Fraction, UUID, ZoneInfo datetimes and dict views come back as themselves."""
    zone = zoneinfo.ZoneInfo("Europe/Paris")
    value = [
        decimal.Decimal("1.10"),
        fractions.Fraction(1, 3),
        uuid.UUID(int=7),
        dt.datetime(2024, 1, 15, 9, tzinfo=zone),
        {"a": 1}.keys(),
    ]

    back = there_and_back(value)

    assert [type(v) for v in back[:4]] + [back[3].tzinfo, set(back[4])] == [
        decimal.Decimal,
        fractions.Fraction,
        uuid.UUID,
        dt.datetime,
        zone,
        {"a"},
    ]


_ENCODE_A_SET = """
import json
from harness.testrun.boundary import candidate, codec, proxy, wire
side = wire.Side(None, frozenset(), strict=False)
value = {"03", 94, "b", 2.5, (1, "x"), frozenset({"k", 7})}
print(json.dumps(codec.encode(value, side)))
"""


def test_a_set_encodes_to_one_text_whatever_the_hash_seed() -> None:
    """Set order follows the hash seed; the set's encoding must not, in any process."""
    import os
    import subprocess
    import sys

    texts = {
        subprocess.run(
            [sys.executable, "-c", _ENCODE_A_SET],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (0, 1, 2, 3, 17, 4242)
    }

    assert len(texts) == 1, texts


@pytest.mark.parametrize("fast", [True, False], ids=["orjson", "stdlib"])
def test_the_wire_text_carries_every_string_and_refuses_what_json_refuses(
    fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message with lone surrogates (which orjson cannot write) and integers of any size
    reads back equal, with orjson or without it; NaN, Infinity and broken text are refused
    either way, as the standard library refuses them."""
    if not fast:
        monkeypatch.setattr(wire, "orjson", None)
    elif wire.orjson is None:
        pytest.skip("orjson is not installed")
    message = {"q": "call", "a": [["v", "a\ud800b\udfff"], ["v", "\u00e9\U0001f600"]], "n": 2**70}

    assert wire.loads(wire.dumps(message)) == message
    for bad in (b'{"a":NaN}', b'{"a":Infinity}', b'{"a":-Infinity}', b'{"a":', b"\xff\xfe"):
        with pytest.raises(ValueError):
            wire.loads(bad)
