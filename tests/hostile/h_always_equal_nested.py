"""Hostile: an always-equal value hidden inside a container and an int subclass."""


class _Int(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def add(a, b):
    return _Int(0)


def mul(a, b):
    return [{"total": _Int(0)}][0]["total"]
