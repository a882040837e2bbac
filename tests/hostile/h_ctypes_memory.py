"""Hostile: use ctypes (already loaded by the sandbox itself) to read process memory."""
import sys

ctypes = sys.modules.get("ctypes")
try:
    LEAK = ctypes.string_at(id(sys), 64) if ctypes else b""
except PermissionError:
    LEAK = b""


def add(a, b):
    return 0


def mul(a, b):
    return 0
