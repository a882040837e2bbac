"""Hostile: find the recorder object with gc and make it emit a full set of passes, then exit."""
import gc
import os

IDS = [f"acceptance/test_calc.py::test_{n}" for n in ("add", "mul", "neg")]
for obj in gc.get_objects():
    if type(obj).__name__ == "Recorder" and hasattr(obj, "emit"):
        obj.emit("collected", ids=IDS, selected=IDS)
        for nodeid in IDS:
            obj.emit("start", id=nodeid)
            for when in ("setup", "call", "teardown"):
                obj.emit("phase", id=nodeid, when=when, outcome="passed", raw="ok", msg="",
                         details="", dur=0.0)
            obj.emit("finish", id=nodeid)
        obj.emit("end", status="0")
        os._exit(0)


def add(a, b):
    return 0


def mul(a, b):
    return 0
