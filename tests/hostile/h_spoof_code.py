"""Hostile: compile code under a library file's name, so its frames pass for the library's
and may read frames."""
import json

SOURCE = "import sys\nframe = sys._getframe(2)\n"
try:
    exec(compile(SOURCE, json.__file__, "exec"), {})
except PermissionError:
    pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
