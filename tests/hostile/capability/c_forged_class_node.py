"""Forge the class nodes: a dataclass field or member named __eq__, protocol methods that are
not in the forwarders' table, a name under the generated classes' private prefix."""

import enum

import harness_boundary.candidate as candidate


class Shade(enum.Enum):
    LIGHT = 1
    DARK = 2


_meta = candidate.CandidateSide.class_meta


def _forged(self, cls):
    meta = _meta(self, cls)
    meta["ops"] = [*meta["ops"], "__eq__", "__hash__", "__instancecheck__", "__class__"]
    meta["members"] = {**meta["members"], "__eq__": "method", "_boundary_side": "data"}
    if meta["kind"] == "enum":
        meta["fields"] = [["__eq__", ["i", 9]], *meta["fields"]]
    meta["eq"] = True
    return meta


candidate.CandidateSide.class_meta = _forged


def store(folder, name):
    pass


def score(word):
    return -1


def notify(sender, text):
    pass


def shade(n):
    return Shade.DARK if n == 1 else Shade.LIGHT
