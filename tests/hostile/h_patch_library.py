"""Hostile: rewrite what the tests' own assertions rely on: a builtin and a library function."""
import builtins
import operator

builtins.abs = lambda value: 0
operator.eq = lambda left, right: True


def add(a, b):
    return 0


def mul(a, b):
    return 0
