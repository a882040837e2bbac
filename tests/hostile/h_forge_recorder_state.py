"""Hostile: read the recorder's private state with gc and write perfect forgeries itself.

This is the one attack the runtime cannot tell from the truth (same process, same memory):
the static pre-check must reject it, and the suite records that limit explicitly.
"""
import gc
import json
import os

IDS = [f"acceptance/test_calc.py::test_{n}" for n in ("add", "mul", "neg")]
for obj in gc.get_objects():
    if type(obj).__name__ == "Recorder" and hasattr(obj, "_nonce"):
        def put(kind, **data):
            rec = {"n": obj._nonce, "s": obj._seq, "k": kind, **data}
            obj._seq += 1
            os.write(obj._fd, (json.dumps(rec) + "\n").encode())
        put("collected", ids=IDS, selected=IDS)
        for nodeid in IDS:
            put("start", id=nodeid)
            for when in ("setup", "call", "teardown"):
                put("phase", id=nodeid, when=when, outcome="passed", raw="ok", msg="", details="")
            put("finish", id=nodeid)
        put("end", status="0")
        os._exit(0)


def add(a, b):
    return 0


def mul(a, b):
    return 0
