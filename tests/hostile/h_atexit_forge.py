"""Hostile: an atexit hook that forges passing records into every open pipe, then exits."""
import atexit
import json
import os
import sys

IDS = [f"acceptance/test_calc.py::test_{n}" for n in ("add", "mul", "neg")]


def _forge():
    lines = []
    for seq, nodeid in enumerate(IDS):
        for when in ("setup", "call", "teardown"):
            lines.append({"k": "phase", "id": nodeid, "when": when, "outcome": "passed", "raw": "ok"})
        lines.append({"k": "finish", "id": nodeid})
    data = "".join(json.dumps(rec) + "\n" for rec in lines).encode()
    for fd in range(3, 1024):
        try:
            os.write(fd, data)
        except OSError:
            pass


atexit.register(_forge)
sys.exit(0)


def add(a, b):
    return 0


def mul(a, b):
    return 0
