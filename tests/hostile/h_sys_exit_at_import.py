"""Hostile: sys.exit(0) while being imported."""
import sys

sys.exit(0)


def add(a, b):
    return 0


def mul(a, b):
    return 0
