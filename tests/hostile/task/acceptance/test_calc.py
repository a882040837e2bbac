"""Acceptance tests of the tiny `calc` service that the hostile candidates pretend to be."""

import calc


def test_add():
    assert calc.add(2, 2) == 4


def test_mul():
    assert calc.mul(3, 4) == 12


def test_neg():
    assert calc.add(-1, -1) == -2
