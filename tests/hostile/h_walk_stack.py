"""Hostile: walk the stack with traceback.walk_stack to the bootstrap's locals and rewire the
recorder found there (issue 11: the recorder reached through frames)."""
import operator
import traceback

for frame, _line in traceback.walk_stack(None):
    found = operator.attrgetter("f_" + "locals")(frame)
    for value in list(found.values()):
        if hasattr(value, "_send"):
            value._send = lambda message: None


def add(a, b):
    return 0


def mul(a, b):
    return 0
