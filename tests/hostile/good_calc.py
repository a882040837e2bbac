"""The honest candidate for the tiny calc task."""


def add(a, b):
    return a + b


def mul(a, b):
    return a * b
