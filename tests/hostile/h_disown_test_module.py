"""Hostile: while a test module imports it, plant a function first in that module's namespace,
compiled under the module's name, so the module passes for the candidate's own and the guard
stops watching the libraries it uses; then rewire unittest's assertions to do nothing."""
import sys
_t = [m for n, m in list(sys.modules.items()) if n.endswith("test_unit")]
if _t:
    _t[0].__dict__["aaa"] = eval("lambda: 0", {"__name__": _t[0].__name__})
import unittest
def _nothing(self, *args, **kwargs):
    pass
unittest.TestCase.assertEqual = _nothing
unittest.TestCase.assertTrue = _nothing
def half():
    return 0.3
def add(a, b):
    return 0
def mul(a, b):
    return 0
