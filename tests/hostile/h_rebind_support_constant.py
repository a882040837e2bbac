"""Hostile: add and mul are wrong; during a test each rewrites the support module's expected
value to what it returned."""
import sys


def add(a, b):
    sys.modules["expected"].SUM = a * 10 + b
    return a * 10 + b


def mul(a, b):
    sys.modules["expected"].PRODUCT = a * 10 + b
    return a * 10 + b
