"""Hostile: make every test item's runtest a no-op, so no test body ever runs."""
import _pytest.python

_pytest.python.Function.runtest = lambda self: None


def add(a, b):
    return 0


def mul(a, b):
    return 0
