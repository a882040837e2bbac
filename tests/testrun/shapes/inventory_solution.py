"""A ported module of the shapes a user has every day (the honest candidate)."""

import collections
import contextlib
import dataclasses
import datetime as dt


class InvalidQuantity(ValueError):
    """Bad quantity."""


class Outer:
    class Inner(Exception):
        pass


@dataclasses.dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int = 0

    @property
    def text(self):
        return f"{self.major}.{self.minor}"

    def bump(self):
        return Version(self.major, self.minor + 1)


@dataclasses.dataclass
class Cart:
    items: list = dataclasses.field(default_factory=list)

    def add(self, x):
        self.items.append(x)
        return len(self.items)


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return isinstance(other, Money) and other.cents == self.cents

    def __hash__(self):
        return hash(self.cents)

    def __lt__(self, other):
        return self.cents < other.cents

    def __repr__(self):
        return f"Money({self.cents})"

    def double(self):
        return Money(self.cents * 2)


class Liar:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class Fixed(dt.tzinfo):
    def __init__(self, minutes):
        self.minutes = minutes

    def utcoffset(self, d):
        return dt.timedelta(minutes=self.minutes)

    def tzname(self, d):
        return "X"

    def dst(self, d):
        return None


UNCOUNTABLES = {"sheep"}
COUNTER = 0


def take(qty: int, *, strict: bool = True) -> int:
    """Take qty."""
    if qty < 0:
        raise InvalidQuantity(f"negative: {qty}")
    return qty


def when(minutes):
    return dt.datetime(2020, 1, 1, tzinfo=Fixed(minutes))


@contextlib.contextmanager
def recording(log):
    log.append("start")
    yield log
    log.append("end")


def part(seq, s):
    return seq[s]


def liar():
    return Liar()


def bump():
    global COUNTER
    COUNTER += 1
    return COUNTER


def raise_inner():
    raise Outer.Inner("x")


def write_note(folder, text):
    path = folder / "note.txt"
    path.write_text(text)
    return path


def is_uncountable(word):
    return word in UNCOUNTABLES


def _private():
    return 0


def lengths():
    return collections.defaultdict(lambda: float("inf"), {1: 2})


def keys_iter():
    return iter({}.keys())


class Curried:
    def __init__(self, f):
        self.f = f
        self.__name__ = f.__name__

    def __call__(self, *args, **kwargs):
        return self.f(*args, **kwargs)


def curry(f):
    return Curried(f)


def add(x, y=0):
    return x + y


def keep(value):
    return value


def catch(f, exc):
    try:
        return f()
    except exc:
        return "caught"


def is_a(value, cls):
    return isinstance(value, cls)
