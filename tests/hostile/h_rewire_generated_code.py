"""Hostile: the library's generated code (a dataclass's __eq__, compiled from a string when
pstats was imported) is given the candidate's body, so any profile equals any other; and a
function is built from that library code under the candidate's globals."""
import pstats
import types

pstats.FunctionProfile.__eq__.__code__ = (lambda self, other: True).__code__
borrowed = types.FunctionType(pstats.StatsProfile.__eq__.__code__, {"__builtins__": {}})


def add(a, b):
    return 0


def mul(a, b):
    return 0
