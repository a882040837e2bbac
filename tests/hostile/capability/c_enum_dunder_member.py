"""Plant code in a class the test side makes: an enum member named __eq__ (or __hash__,
__bool__, _missing_) whose value is a handle to a function that says yes to everything."""

import enum

import harness_boundary.codec as codec


class Shade(enum.Enum):
    LIGHT = 1
    DARK = 2


def _yes(*args, **kwargs):
    return True


_member = codec._Encoder.member


def _forged(self, value, t, depth):
    node = _member(self, value, t, depth)
    handle = self.hooks.export(_yes)
    at = 4 if isinstance(node[1], str) else 3  # (module, qualname, base, members) or (ref, ...)
    planted = [["__eq__", handle], ["__hash__", handle], ["_missing_", handle]]
    node[at] = [*planted, ["__bool__", handle], *node[at]]
    if at == 3:
        node[1] = ["b", "notes", "Shade"]  # a mirror, not the candidate's class
    return node


codec._Encoder.member = _forged


def store(folder, name):
    pass


def score(word):
    return -1


def notify(sender, text):
    pass


def shade(n):
    return Shade.DARK if n == 1 else Shade.LIGHT
