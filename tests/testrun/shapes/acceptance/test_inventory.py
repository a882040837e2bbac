"""Honest tests of the shapes a ported module has every day; each failed behind the boundary
before its classes and functions were generated on the test side."""

import dataclasses
import datetime as dt
import inspect
import pickle
import types

import inventory
import pytest
from inventory import InvalidQuantity, Money, Outer, Version, recording, take

NAME = take.__name__  # read at collection, as QuixBugs' suites do


def test_function_metadata():
    assert (NAME, take.__qualname__, take.__doc__, type(take) is types.FunctionType) == (
        "take",
        "take",
        "Take qty.",
        True,
    )
    assert str(inspect.signature(take)) == "(qty: int, *, strict: bool = True) -> int"


def test_own_exception_class():
    with pytest.raises(InvalidQuantity, match="negative"):
        take(-1)
    assert issubclass(InvalidQuantity, ValueError)


def test_nested_exception_class():
    with pytest.raises(Outer.Inner):
        inventory.raise_inner()


def test_pickle_by_reference():
    assert pickle.loads(pickle.dumps(InvalidQuantity)) is InvalidQuantity
    assert pickle.loads(pickle.dumps(take)) is take


def test_frozen_ordered_dataclass_with_methods():
    v = Version(1, 2)
    assert dataclasses.is_dataclass(v) and isinstance(v, Version)
    assert (v.text, v.bump(), v < Version(1, 3), hash(v) == hash(Version(1, 2))) == (
        "1.2",
        Version(1, 3),
        True,
        True,
    )


def test_mutable_dataclass_method_changes_the_record():
    cart = inventory.Cart()
    assert (cart.add(5), cart.items) == (1, [5])


def test_value_class_with_its_own_eq():
    assert Money(1) == Money(1) and Money(1) != Money(2)
    assert (hash(Money(1)) == hash(Money(1)), Money(1) < Money(2), repr(Money(3))) == (
        True,
        True,
        "Money(3)",
    )
    assert Money(2).double() == Money(4)


def test_pickle_of_an_instance():
    m = Money(5)
    assert pickle.loads(pickle.dumps(m)) == m


def test_subclass_of_a_candidate_class():
    class Tip(Money):
        def plus_one(self):
            return self.cents + 1

    tip = Tip(4)
    assert (tip.cents, tip.plus_one(), tip.double()) == (4, 5, Money(8))


def test_custom_tzinfo():
    assert inventory.when(60).utcoffset() == dt.timedelta(minutes=60)


def test_context_manager_appends_to_a_list_inside_the_with():
    log = []
    with recording(log):
        assert log == ["start"]
    assert log == ["start", "end"]


def test_slice_and_range_arguments():
    assert inventory.part([1, 2, 3, 4], slice(1, 3)) == [2, 3]
    assert inventory.part(range(10), slice(2, 4)) == range(2, 4)


def test_module_state_read_after_a_call():
    assert (inventory.bump(), inventory.COUNTER) == (1, 1)


def test_tmp_path_is_the_same_folder_on_both_sides(tmp_path):
    written = inventory.write_note(tmp_path, "hi")
    assert (written, (tmp_path / "note.txt").read_text()) == (tmp_path / "note.txt", "hi")


def test_a_module_level_container_the_tests_change_is_the_candidates():
    inventory.UNCOUNTABLES.add("ors")
    assert (inventory.is_uncountable("ors"), "ors" in inventory.UNCOUNTABLES) == (True, True)


def test_star_import_and_dir_list_the_public_names():
    names = {}
    exec("from inventory import *", names)
    assert ("take" in names, "_private" in names, "Money" in dir(inventory)) == (True, False, True)


def test_a_defaultdict_with_the_candidates_factory():
    found = inventory.lengths()
    assert (found == {1: 2}, found[7]) == (True, float("inf"))


def test_next_on_an_exhausted_candidate_iterator_raises_stop_iteration():
    with pytest.raises(StopIteration):
        next(inventory.keys_iter())


def test_a_callable_object_takes_keywords_and_keeps_its_name():
    curried = inventory.curry(inventory.add)
    assert (curried(1, y=2), curried.__name__) == (3, "add")


def test_the_tests_own_object_comes_back_as_itself():
    def convert(text):
        return text

    table = {"convert": convert}
    assert inventory.keep(table)["convert"] is convert


def test_builtin_classes_the_tests_pass_are_the_builtins():
    def boom():
        raise IndexError("x")

    assert (inventory.catch(boom, IndexError), inventory.is_a(3, (int, float))) == (
        "caught",
        True,
    )
