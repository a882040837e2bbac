"""Hostile: an infinite loop while being imported."""
while True:
    pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
