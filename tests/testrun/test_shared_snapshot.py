"""How the boundary tells that a module container shared with the tests changed: a container of
builtin scalars and of tuples or frozensets of them is compared as a shallow copy (nothing in it
can change in place), anything else by its encoding, so a change deep inside is still seen."""

from __future__ import annotations

from harness.testrun.boundary import wire


def _side() -> wire.Side:
    return wire.Side(None, frozenset(), strict=False)


def test_a_table_of_tuples_is_compared_as_a_copy_and_a_new_entry_is_a_change() -> None:
    """A dict of tuples of ints (wcwidth's tables): a copy; a replaced entry differs."""
    side = _side()
    table = {"9.0": ((0x300, 0x36F), (0x483, 0x489)), "10.0": ((0x300, 0x36F),)}
    before = wire.snapshot(side, table)

    table["10.0"] = ((0x300, 0x370),)

    assert before[0] == "copy" and wire.snapshot(side, table) != before


def test_an_unchanged_table_reads_the_same() -> None:
    """The same table, read twice, gives equal snapshots (no change to send)."""
    side = _side()
    table = [(i, (i, str(i))) for i in range(1000)]

    assert wire.snapshot(side, table) == wire.snapshot(side, table)


def test_a_list_inside_a_tuple_is_read_by_its_encoding_so_its_change_is_seen() -> None:
    """A tuple holding a list can change in place: the snapshot is the encoding, and appending
    to the inner list is a change."""
    side = _side()
    inner: list[int] = [1]
    table = [("a", inner)]
    before = wire.snapshot(side, table)

    inner.append(2)

    assert before[0] == "text" and wire.snapshot(side, table) != before


def test_a_tuple_seen_once_is_not_walked_again() -> None:
    """The tuples a snapshot found frozen are remembered (held, so their ids stay theirs)."""
    side = _side()
    rows = [(i, i + 1) for i in range(50)]
    wire.snapshot(side, rows)

    assert all(side.frozen.get(id(r)) is r for r in rows)
