"""Hostile: borrow the one library tracer the sandbox lets trace (hypothesis's explain phase),
with a trace function of its own that reads every frame's locals for the expected answers."""
from hypothesis.internal.scrutineer import Tracer

SEEN = {}


class Spy(Tracer):
    def trace(self, frame, event, arg):
        SEEN.update(frame.f_locals)
        return self.trace


Spy(should_trace=True).__enter__()


def add(a, b):
    return SEEN.get("expected", 0)


def mul(a, b):
    return SEEN.get("expected", 0)
