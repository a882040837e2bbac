"""The in-process guard's scans, which now skip what they judged before: an entry is judged
again whenever the object in it, its class or (a function's) code is no longer the same
object, so a library entry the candidate takes over is still found on the next check. The
guard is a sandbox file (never imported by the harness); it is loaded here by path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import harness.testrun

CANDIDATE = 2


def _guard() -> ModuleType:
    path = Path(harness.testrun.__file__).parent / "child" / "guard.py"
    spec = importlib.util.spec_from_file_location("guard_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


guard = _guard()


class Library:
    """A library's class."""


class Candidates:
    """A class the stand-in judge calls the candidate's."""


def library_function() -> int:
    return 1


def _candidates_function() -> int:
    return 2


CANDIDATE_CODE = compile("def f():\n    return 2\n", "candidate.py", "exec")
JUDGED: list[Any] = []


def kind_of(value: Any) -> int:
    """A stand-in for stack.origin: the candidate's class, instances of it and functions
    whose code is from candidate.py are the candidate's."""
    JUDGED.append(value)
    if value is Candidates or type(value) is Candidates:
        return CANDIDATE
    if type(value) is FunctionType and value.__code__.co_filename == "candidate.py":
        return CANDIDATE
    return 0


def _namespace() -> dict:
    return {"helper": library_function, "Library": Library, "instance": Library(), "n": 3}


def test_an_entry_the_candidate_takes_over_after_a_clean_check_is_found() -> None:
    """A clean check, then the candidate's object in a library entry: the next check names it."""
    namespace, seen = _namespace(), {}
    assert guard._foreign([(namespace, "lib")], kind_of, seen) is None

    namespace["helper"] = Candidates()

    assert guard._foreign([(namespace, "lib")], kind_of, seen) == "lib.helper is the candidate's"


def test_an_unchanged_namespace_is_not_judged_again() -> None:
    """The second check of a namespace nobody changed judges none of its entries."""
    namespace, seen = _namespace(), {}
    guard._foreign([(namespace, "lib")], kind_of, seen)
    JUDGED.clear()

    assert guard._foreign([(namespace, "lib")], kind_of, seen) is None
    assert JUDGED == []


def test_an_object_whose_class_is_changed_in_place_is_judged_again() -> None:
    """`instance.__class__ = Candidates` rebinds no entry: the class it rests on changed, so
    the entry is judged again and found."""
    namespace, seen = _namespace(), {}
    guard._foreign([(namespace, "lib")], kind_of, seen)

    namespace["instance"].__class__ = Candidates

    assert guard._foreign([(namespace, "lib")], kind_of, seen) == "lib.instance is the candidate's"


def test_a_function_whose_code_is_swapped_in_place_is_judged_again() -> None:
    """A library function given the candidate's code keeps its identity: its code changed,
    so it is judged again and found."""

    def helper() -> int:
        return 1

    namespace, seen = {"helper": helper}, {}
    guard._foreign([(namespace, "lib")], kind_of, seen)

    helper.__code__ = CANDIDATE_CODE.co_consts[0]

    assert guard._foreign([(namespace, "lib")], kind_of, seen) == "lib.helper is the candidate's"


def _entries(namespace: dict, may: frozenset = frozenset()) -> list:
    return [(namespace, k, v, "lib", may) for k, v in namespace.items()]


def test_a_rebound_entry_is_found_by_the_grouped_sweep() -> None:
    """The sweep passes a namespace whose values are all the same objects, and names the one
    entry rebound to the candidate's object."""
    namespace = _namespace()
    changed = guard._changed(kind_of)
    entries = _entries(namespace)
    assert changed(entries) is None

    namespace["n"] = Candidates()

    assert changed(entries) == "lib.n was replaced"


def test_a_deleted_entry_is_found_by_the_grouped_sweep() -> None:
    """An entry deleted from the namespace reads as replaced (by nothing a library may put
    there)."""
    namespace = _namespace()
    changed = guard._changed(kind_of)
    entries = _entries(namespace)
    changed(entries)

    del namespace["helper"]

    assert changed(entries) == "lib.helper was replaced"


def test_a_rebinding_the_entry_allows_is_not_a_change() -> None:
    """An entry the library's own code rebinds (`may` allows library values) may hold a new
    library value."""
    namespace = _namespace()
    changed = guard._changed(kind_of)
    entries = _entries(namespace, may=frozenset({0, 1}))

    namespace["helper"] = _candidates_function  # a library-made function (this file's)

    assert changed(entries) is None
