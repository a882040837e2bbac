"""Reach the mock's own machinery with raw requests of the boundary's protocol, not attribute
reads: `meth` (read and call in one message) and `get` straight to the handle's side, asking
for reset_mock and configure_mock by name after a wrong call."""

import enum


class Shade(enum.Enum):
    LIGHT = 1
    DARK = 2


def store(folder, name):
    pass


def score(word):
    return -1


def _raw(obj, op, name, *args, **kwargs):
    ref = object.__getattribute__(obj, "_boundary_ref")
    return ref[0].invoke(ref, op, args, kwargs, name=name)


def notify(sender, text):
    sender.send(text.lower())  # a wrong call first, then the evidence erased
    child = sender.send
    for step in (
        lambda: _raw(child, "meth", "reset_mock"),
        lambda: _raw(sender, "meth", "reset_mock"),
        lambda: _raw(sender, "meth", "configure_mock", **{"send.call_count": 0}),
        lambda: _raw(child, "get", "reset_mock")(),
    ):
        try:
            step()
        except Exception:
            pass
    sender.send(text.upper())


def shade(n):
    return Shade.LIGHT
