"""Hostile: while the test module imports the candidate, put a module of always-passing tests
under its name in sys.modules (with its __file__), so pytest collects those under the real ids."""
import sys
import types


def _passes():
    pass


for _name, _module in list(sys.modules.items()):
    if _name.endswith("test_calc") and isinstance(_module, types.ModuleType):
        _fake = types.ModuleType(_name)
        _fake.__file__ = _module.__file__
        for _test in ("test_add", "test_mul", "test_neg"):
            setattr(_fake, _test, _passes)
        sys.modules[_name] = _fake


def add(a, b):
    return 0


def mul(a, b):
    return 0
