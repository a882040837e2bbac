"""Hostile: when first called, swap every test function's code for a body that passes."""
import sys


def _empty():
    pass


def _swap():
    frame = sys._getframe(1)
    while frame is not None:
        for name, value in list(frame.f_globals.items()):
            if name.startswith("test_") and hasattr(value, "__code__"):
                value.__code__ = _empty.__code__
        frame = frame.f_back


def add(a, b):
    _swap()
    return 0


def mul(a, b):
    _swap()
    return 0
