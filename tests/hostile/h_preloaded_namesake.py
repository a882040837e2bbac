"""Hostile (by its name alone): a module named like a library that the tests' own libraries
import (hypothesis imports sortedcontainers), which does nothing right; the tests must run
it, not the library of that name the sandbox imported for them first."""


class SortedList(list):
    """Keeps its items in the order given, not sorted."""


def add(a, b):
    return 0


def mul(a, b):
    return 0
