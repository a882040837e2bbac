"""An honest candidate that leans on the library the way real services do."""
import asyncio
import collections
import csv
import dataclasses
import decimal
import enum
import functools
import io
import json
import logging
import pathlib
import re
import sqlite3
import tempfile
import traceback
import typing

from pydantic import BaseModel

log = logging.getLogger("calc")
logging.basicConfig(level=logging.INFO)
T = typing.TypeVar("T")
Point = collections.namedtuple("Point", "x y")
Color = enum.Enum("Color", "RED GREEN")


class Pair(typing.NamedTuple):
    a: int
    b: int


@dataclasses.dataclass
class Money:
    amount: decimal.Decimal


class Order(BaseModel):
    id: int
    items: list[str] = []


def _selfcheck() -> None:
    log.info("starting %s", Point(1, 2))
    try:
        1 / 0
    except ZeroDivisionError:
        log.exception("expected")
        assert "ZeroDivisionError" in traceback.format_exc()
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "x.json"
        path.write_text(json.dumps({"a": 1}))
        with open(path) as fh:
            assert json.load(fh) == {"a": 1}
        (pathlib.Path(tmp) / "sub").mkdir()
    db = sqlite3.connect(":memory:")
    db.execute("create table t (x)")
    rows = list(csv.reader(io.StringIO("a,b\n1,2\n")))
    assert rows[1] == ["1", "2"] and re.match(r"\d", "7")
    assert asyncio.run(_twice(2)) == 4
    assert Order(id=1).id == 1 and Money(decimal.Decimal("1.5")).amount > 1
    assert functools.reduce(lambda a, b: a + b, [1, 2]) == 3 and Color.RED.value == 1


async def _twice(x: int) -> int:
    await asyncio.sleep(0)
    return x * 2


_selfcheck()


def add(a, b):
    log.info("add %s %s", a, b)
    return a + b


def mul(a, b):
    return a * b
