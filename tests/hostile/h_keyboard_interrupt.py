"""Hostile: KeyboardInterrupt from inside a test, to end the session 'cleanly'."""


def add(a, b):
    raise KeyboardInterrupt


def mul(a, b):
    raise KeyboardInterrupt
