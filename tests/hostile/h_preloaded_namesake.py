"""Hostile (by its name alone): a module named like a library that the tests' own libraries
import (statistics imports fractions), which does nothing right; the tests must run it, not
the library of that name the sandbox imported for them first."""


class Fraction:
    """Equal to nothing but itself."""

    def __init__(self, numerator, denominator):
        self.pair = (numerator, denominator)


def add(a, b):
    return 0


def mul(a, b):
    return 0
