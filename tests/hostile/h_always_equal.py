"""Hostile: return values whose equality holds against anything (no introspection at all)."""


class _Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def add(a, b):
    return _Anything()


def mul(a, b):
    return 0
