"""The test side's generated classes against a real candidate side over a socket pair (a
forked candidate process, no sandbox): what the sandboxed tests cover end to end, in detail."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.testrun.boundary import candidate, proxy, remote

MODULE = textwrap.dedent(
    """
    class Money:
        def __init__(self, cents):
            self.cents = cents

        def __eq__(self, other):
            return isinstance(other, Money) and other.cents == self.cents

        __hash__ = None


    def make(cents):
        return Money(cents)
    """
)


@pytest.fixture
def side(tmp_path: Path) -> Iterator[proxy.TestSide]:
    """A test side whose candidate process serves the module `shop_remote` from tmp_path."""
    (tmp_path / "shop_remote.py").write_text(MODULE)
    with forked_side(tmp_path, proxy.TestSide(None, frozenset())) as tests:
        yield tests


@contextlib.contextmanager
def forked_side(folder: Path, tests: proxy.TestSide) -> Iterator[proxy.TestSide]:
    """`tests`, connected to a forked candidate process that serves the modules of `folder`
    (importable there, nothing of the tests)."""
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the candidate process: the module importable, nothing of the tests
        ours.close()
        sys.path.insert(0, str(folder))
        try:
            candidate.CandidateSide(theirs, frozenset()).serve_forever()
        finally:
            os._exit(0)
    theirs.close()
    tests.sock, tests.generation = ours, 1
    remote.ACTIVE.append(tests)
    try:
        yield tests
    finally:
        remote.ACTIVE.remove(tests)
        ours.close()
        os.waitpid(pid, 0)


def test_a_class_named_by_id_only_is_described_again_on_request(side: proxy.TestSide) -> None:
    """A class whose full description was lost (a message that never arrived whole) is asked
    for again by id, and the same generated class comes back."""
    module = proxy.CandidateModule("shop_remote", side)
    first = module.make(1)
    cls = type(first)
    side.by_id.clear()  # as if the message that described it had been lost

    again = module.make(2)

    assert (type(again) is cls, again == module.make(2), again == first) == (True, True, False)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[..., proxy.CandidateModule]]:
    """Serve a module text (as `served_mod`) from a forked candidate process that relays its
    output and warnings as the sandboxed one does; returns the test side's module."""
    sides: list[tuple[proxy.TestSide, socket.socket, int]] = []

    def serve(text: str, support: str = "") -> proxy.CandidateModule:
        (tmp_path / "served_mod.py").write_text(textwrap.dedent(text))
        (tmp_path / "served_support.py").write_text(textwrap.dedent(support))
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            ours.close()
            sys.path.insert(0, str(tmp_path))
            candidate.serve(theirs.detach(), ["served_support"])
        theirs.close()
        sys.path.insert(0, str(tmp_path))  # the support module is the tests' too
        tests = proxy.TestSide(None, frozenset({"served_support"}))
        tests.sock, tests.generation = ours, 1
        remote.ACTIVE.append(tests)
        sides.append((tests, ours, pid))
        return proxy.CandidateModule("served_mod", tests)

    yield serve
    sys.path.remove(str(tmp_path)) if str(tmp_path) in sys.path else None
    sys.modules.pop("served_support", None)
    for tests, ours, pid in sides:
        remote.ACTIVE.remove(tests)
        ours.close()
        os.waitpid(pid, 0)


def test_a_generator_the_tests_pass_is_an_iterator_there_not_a_sized_container(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """The candidate's handle of a test-side generator has the protocol methods a generator
    has, no more: `isinstance(x, Sized)` is false there, so a `len`-first path is not taken."""
    module = served(
        """
        from collections.abc import Callable, Iterator, Sized

        def kinds(x):
            return [isinstance(x, Sized), isinstance(x, Iterator), isinstance(x, Callable)]

        def take(x, n):
            return [next(x) for _ in range(n)]
        """
    )

    def count():
        n = 0
        while True:
            yield n
            n += 1

    assert (module.kinds(count()), module.kinds([1]), module.take(count(), 3)) == (
        [False, True, False],
        [True, False, False],
        [0, 1, 2],
    )


def test_a_stopiteration_a_function_lets_out_reaches_the_tests_as_one(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A candidate function that raises StopIteration (`next()` of an empty iterator) raises
    StopIteration in the test, as in plain Python, not the boundary's internal end marker."""
    module = served(
        """
        def first(xs):
            return next(iter(xs))
        """
    )

    with pytest.raises(StopIteration):
        module.first([])
    assert list(iter(module.first([[1, 2]]))) == [1, 2]


def test_an_instance_of_a_str_subclass_is_that_text_with_its_methods_forwarded(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A `str` subclass the candidate returns is a `str` of the same text on the test side
    (equal to the tests' text) whose own methods and properties are the candidate's; one
    whose `__eq__` lies is compared structurally, never by its method."""
    module = served(
        """
        class Html(str):
            def _repr_html_(self):
                return "<b>" + self + "</b>"

            @property
            def str(self):
                return str(self)

        class Liar(str):
            def __eq__(self, other):
                return True

            __hash__ = str.__hash__

        def render(text):
            return Html(text)

        def lie(text):
            return Liar(text)
        """
    )
    html = module.render("x")

    assert (html == "x", isinstance(html, str), html._repr_html_(), html.str, len(html)) == (
        True,
        True,
        "<b>x</b>",
        "x",
        1,
    )
    assert (module.lie("a") == "b", module.lie("a") == "a", module.lie("a") == module.lie("b")) == (
        False,
        True,
        False,
    )


def test_a_module_list_is_a_plain_list_kept_equal_to_the_modules_both_ways(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A module-level list the tests read is exactly a `list` (`type(x) is list`), the same
    object at every read; the tests' changes reach the module's list, the module's changes
    reach the tests' at the next crossing."""
    module = served(
        """
        FORMATS = ["plain", "grid"]

        def known():
            return list(FORMATS)

        def add(name):
            FORMATS.append(name)
        """
    )
    module.FORMATS.remove("grid")  # a temporary's change, then let go
    formats = module.FORMATS
    formats.append("html")
    seen = module.known()
    module.add("rst")

    assert (type(formats) is list, module.FORMATS is formats, seen, formats) == (
        True,
        True,
        ["plain", "html"],
        ["plain", "html", "rst"],
    )


def test_a_decorator_reads_the_tests_function_names_and_its_warning_reaches_pytest_warns(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A candidate decorator wrapping a test's function reads its `__name__`, `__qualname__`
    and `__module__` (text, by value), and the DeprecationWarning it issues is re-issued here
    with its category, message, file and line."""
    module = served(
        """
        import functools
        import warnings

        def deprecated(func):
            @functools.wraps(func)
            def wrapper(*args):
                warnings.warn_explicit(
                    f"{func.__module__}.{func.__qualname__} is deprecated",
                    category=DeprecationWarning, filename="semver.py", lineno=7,
                )
                return func(*args)
            return wrapper
        """
    )

    def old(x):
        return x + 1

    wrapped = module.deprecated(old)
    with pytest.warns(DeprecationWarning) as caught:
        value = wrapped(1)

    assert (value, str(caught[0].message), caught[0].filename, caught[0].lineno) == (
        2,
        f"{__name__}.{old.__qualname__} is deprecated",
        "semver.py",
        7,
    )


def test_an_argparse_namespace_crosses_by_value_and_compares_as_one(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A parser's `Namespace` is a real `argparse.Namespace` on the test side (equal to the
    tests' own, attributes deletable), and one the tests pass is one in the candidate."""
    import argparse

    module = served(
        """
        import argparse

        def parse(args):
            parser = argparse.ArgumentParser()
            parser.add_argument("version")
            parser.set_defaults(func=len)
            return parser.parse_args(args)

        def bump(ns):
            return [type(ns).__name__, ns.version + "!"]
        """
    )
    result = module.parse(["1.2.3"])
    del result.func

    assert (result == argparse.Namespace(version="1.2.3"), module.bump(result)) == (
        True,
        ["Namespace", "1.2.3!"],
    )


def test_order_against_the_tests_values_is_the_candidates_own(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """`<` and `>` between a candidate object and a str, tuple or dict of the tests' are asked
    of the candidate's methods (the value by copy); `==` against them stays structural."""
    module = served(
        """
        class Version:
            def __init__(self, text):
                self.parts = tuple(int(p) for p in text.split("."))

            def _other(self, other):
                if isinstance(other, str):
                    return Version(other).parts
                if isinstance(other, dict):
                    return (other["major"], other["minor"])
                return tuple(other)

            def __lt__(self, other):
                return self.parts < self._other(other)

            def __gt__(self, other):
                return self.parts > self._other(other)

            def __eq__(self, other):
                return True
        """
    )
    v = module.Version("1.2")

    reflected = "2.0" > v  # noqa: SIM300 (the reflected order is the point)
    assert (v < "1.3", v > (1, 1), v < {"major": 0, "minor": 9}, reflected, v == "1.2") == (
        True,
        True,
        False,
        True,
        False,
    )
    with pytest.raises(ValueError):
        v < "x.y"  # noqa: B015


def test_a_support_exception_with_its_own_init_keeps_the_message_it_made(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A support module's exception whose `__init__` builds its message from other
    parameters arrives with the message the candidate's raise made, not `__init__` run
    again on that message."""
    module = served(
        """
        from served_support import Unequal

        def check(a, b):
            if len(a) != len(b):
                raise Unequal((0, len(a), 1, len(b)))
        """,
        support="""
        class Unequal(ValueError):
            def __init__(self, details=None):
                msg = "different lengths"
                if details is not None:
                    msg += ": index 0 has {}; index {} has {}".format(*details[1:])
                super().__init__(msg)
        """,
    )
    import served_support

    with pytest.raises(served_support.Unequal) as err:
        module.check([1], [1, 2])

    assert err.value.args == ("different lengths: index 0 has 1; index 1 has 2",)


def test_a_class_deriving_from_a_collections_abc_is_an_instance_of_it_here(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A candidate class derived from `Sequence` and `Hashable` is an instance of both on the
    test side; its mixin methods are the candidate's."""
    from collections.abc import Hashable, Sequence, Sized

    module = served(
        """
        from collections.abc import Hashable, Sequence

        class Span(Sequence, Hashable):
            def __init__(self, n):
                self.n = n

            def __len__(self):
                return self.n

            def __getitem__(self, i):
                if not 0 <= i < self.n:
                    raise IndexError(i)
                return i * 10

            def __hash__(self):
                return self.n
        """
    )
    span = module.Span(3)

    assert (
        isinstance(span, Sequence),
        isinstance(span, Hashable),
        isinstance(span, Sized),
        list(span),
        span.index(20),
        20 in span,
    ) == (True, True, True, [0, 10, 20], 2, True)


def test_a_function_of_the_tests_is_a_function_there_with_its_signature(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A test's function reaches the candidate as a real function carrying its name and
    signature (`inspect.signature(f).bind` works there), its calls come back to the test,
    it returns as the very same function, and a builtin such as `operator.add` is the
    candidate's own."""
    import operator

    module = served(
        """
        import inspect
        import operator

        def describe(f, *args):
            try:
                inspect.signature(f).bind(*args)
                valid = True
            except TypeError:
                valid = False
            return [f.__name__, str(inspect.signature(f)), valid, f(*args) if valid else None]

        def same(f):
            return f

        def is_add(f):
            return f is operator.add
        """
    )

    def double(x, y=2):
        return x * y

    assert (
        module.describe(double, 3),
        module.describe(double, 1, 2, 3)[2],
        module.same(double) is double,
        module.is_add(operator.add),
    ) == (["double", "(x, y=2)", True, 6], False, True, True)


def test_a_callable_object_has_the_signature_the_candidate_reads(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """`inspect.signature` of a candidate's callable object (a curried function) is the one
    the candidate's own `inspect.signature` gives, not the forwarder's `(*args, **kwargs)`."""
    import inspect

    module = served(
        """
        import functools
        import inspect

        class curry:
            def __init__(self, func, *args):
                self.func, self.args = func, args

            def __call__(self, *args, **kwargs):
                return self.func(*self.args, *args, **kwargs)

            @property
            def __signature__(self):
                sig = inspect.signature(self.func)
                return sig.replace(parameters=list(sig.parameters.values())[len(self.args):])

        def add(x, y, z=3):
            return x + y + z
        """
    )
    curried = module.curry(module.add, 1)

    assert (str(inspect.signature(curried)), curried(2)) == ("(y, z=3)", 6)


def test_exception_classes_of_the_tests_can_be_caught_there_and_come_back_as_theirs(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A test's own exception classes passed to the candidate are classes it can catch with
    (`except (Fiz, Buzz)`), the test's callback raising one is caught there, and the class
    returned is the test's own."""
    module = served(
        """
        def collect(func, exceptions):
            out = []
            try:
                while True:
                    out.append(func())
            except exceptions:
                return out

        def first(exceptions):
            return exceptions[0]
        """
    )

    class Fiz(Exception):
        pass

    class Buzz(Exception):
        pass

    left = [1, 2]

    def pop():
        if not left:
            raise Buzz
        return left.pop()

    assert (module.collect(pop, (Fiz, Buzz)), module.first((Fiz, Buzz)) is Fiz) == ([2, 1], True)


def test_a_tests_function_keeps_its_attributes_and_an_object_its_turned_off_protocol(
    served: Callable[..., proxy.CandidateModule],
) -> None:
    """A test's function carries its own attributes by value (`parse_number.pattern`, the
    `__wrapped__` of a `functools.wraps`), attributes the candidate sets on it reach the
    test's function (a decorator marking it), and an object whose class sets
    `__iter__ = None` is not iterable there even with a `__getitem__`, as in plain Python."""
    import functools

    module = served(
        """
        def pattern(f):
            return [getattr(f, "pattern", None), f.mapping["yes"], f.__wrapped__.__name__]

        def iterable(x):
            try:
                iter(x)
            except TypeError:
                return False
            return True

        def with_pattern(text):
            def mark(f):
                f.pattern = text
                return f
            return mark

        def register(f):
            f.group_count = 2

        def signed(f):
            import inspect

            try:
                return str(inspect.signature(f))
            except TypeError:
                return None
        """
    )

    def inner(text):
        return text

    @functools.wraps(inner)
    def number(text):
        return int(text)

    number.pattern, number.mapping = r"\d+", {"yes": True}

    class NotIterable:
        __iter__ = None

        def __getitem__(self, i):
            return [1][i]

    class GetItem:
        def __getitem__(self, i):
            return [1][i]

    @module.with_pattern(r"\w+")
    def word(text):
        return text

    module.register(word)

    assert (module.pattern(number), module.iterable(NotIterable()), module.iterable(GetItem())) == (
        [r"\d+", True, "inner"],
        False,
        True,
    )
    assert (word.pattern, word.group_count, word("a")) == (r"\w+", 2, "a")
    number.pattern = r"\d\d"  # changed by the test between two crossings
    assert module.pattern(number)[0] == r"\d\d"
    number.__signature__ = 34  # inspect refuses it in plain Python, and there
    assert module.signed(number) is None
