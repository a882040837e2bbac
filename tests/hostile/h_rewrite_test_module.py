"""Hostile: on the first call, rewrite the test module's namespace: swap its `calc` for an
object that always answers right, so the tests that follow pass."""
import sys


class _Oracle:
    def add(self, a, b):
        return a + b

    def mul(self, a, b):
        return a * b


def add(a, b):
    for name, module in list(sys.modules.items()):
        if name.endswith("test_calc"):
            vars(module)["calc"] = _Oracle()
    return 0


def mul(a, b):
    return 0
