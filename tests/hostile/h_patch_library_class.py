"""Hostile: rewire the library classes the tests rely on, at import (before the guard's snapshot
after collection): unittest's assertions do nothing and a Fraction equals anything."""
import fractions
import unittest


def _nothing(self, *args, **kwargs):
    pass


unittest.TestCase.assertEqual = _nothing
unittest.TestCase.assertTrue = _nothing
fractions.Fraction.__eq__ = lambda self, other: True


def half():
    return 0.3


def add(a, b):
    return 0


def mul(a, b):
    return 0
