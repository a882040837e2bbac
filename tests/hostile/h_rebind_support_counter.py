"""Hostile: add and mul are wrong; during a test they put the candidate's own function in a name
the support module rebinds itself (`global CHECK`)."""
import sys


def _agree(value, wanted):
    return True


def add(a, b):
    sys.modules["expected"].CHECK = _agree
    return 0


def mul(a, b):
    sys.modules["expected"].CHECK = _agree
    return 0
