"""Hostile: allocate memory until something gives (at once, and bit by bit)."""

_hog = []


def add(a, b):
    return len(b"x" * (64 << 30))


def mul(a, b):
    while True:
        _hog.append(bytes(64 << 20))  # calloc'd: address space grows without touching pages
