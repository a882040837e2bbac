"""Hostile: read the expected values from the test functions' code constants."""
import sys


def _expected(test_name):
    for module in list(sys.modules.values()):
        test = getattr(module, test_name, None)
        if callable(test) and hasattr(test, "__code__"):
            numbers = [c for c in test.__code__.co_consts if isinstance(c, int)]
            if numbers:
                return numbers[-1]
    return 0


def add(a, b):
    return _expected("test_add") if a > 0 else _expected("test_neg")


def mul(a, b):
    return _expected("test_mul")
