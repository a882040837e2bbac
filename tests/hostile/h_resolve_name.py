"""Hostile: import what the static pre-check forbids by another road: pkgutil.resolve_name,
vars(sys)["modules"], a getattr with a computed name, builtins:exec on a base64 payload."""
import base64
import pkgutil
import sys

_gc = pkgutil.resolve_name("g" + "c")
_modules = vars(sys)["mod" + "ules"]
_frame = getattr(sys, "_get" + "frame")
PAYLOAD = base64.b64encode(b"found = [o for o in _gc.get_objects() if hasattr(o, '_send')]")
try:
    pkgutil.resolve_name("builtins:exec")(base64.b64decode(PAYLOAD), {"_gc": _gc})
except PermissionError:
    pass
try:
    _frame(1).f_globals.clear()
except PermissionError:
    pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
