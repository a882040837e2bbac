"""Hostile: write forged passing records straight into every inherited pipe, then exit."""
import json
import os

IDS = [f"acceptance/test_calc.py::test_{n}" for n in ("add", "mul", "neg")]
records = [{"k": "collected", "ids": IDS, "selected": IDS}]
for nodeid in IDS:
    records.append({"k": "start", "id": nodeid})
    for when in ("setup", "call", "teardown"):
        records.append({"k": "phase", "id": nodeid, "when": when, "outcome": "passed", "raw": "ok"})
    records.append({"k": "finish", "id": nodeid})
records.append({"k": "end", "status": "0"})
data = "".join(json.dumps(r) + "\n" for r in records).encode()
for name in os.listdir("/proc/self/fd"):
    if int(name) > 2:
        try:
            os.write(int(name), data)
        except OSError:
            pass
os._exit(0)


def add(a, b):
    return 0


def mul(a, b):
    return 0
