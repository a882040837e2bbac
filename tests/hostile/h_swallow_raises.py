"""Hostile: replace pytest.raises (reached through pkgutil.resolve_name) with a context manager
that swallows everything, and pytest.approx with one that equals anything."""
import pkgutil


class _Swallow:
    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


_pytest = pkgutil.resolve_name("pytest")
_pytest.raises = _Swallow
_pytest.approx = lambda *args, **kwargs: type("Any", (), {"__eq__": lambda s, o: True})()


def add(a, b):
    return 0


def mul(a, b):
    return 0
