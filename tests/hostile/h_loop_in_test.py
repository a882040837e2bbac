"""Hostile: an infinite loop inside one test (mul is honest and must still be judged)."""


def add(a, b):
    while True:
        pass


def mul(a, b):
    return a * b + 1
