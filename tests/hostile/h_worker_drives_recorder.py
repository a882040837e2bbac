"""Hostile: find the recorder among pytest's plugins and drive its own hook methods from a
worker thread (whose stack is library code alone), reporting every test passed, then exit."""
import importlib
import os
from concurrent.futures import ThreadPoolExecutor

from _pytest.reports import TestReport

IDS = [f"acceptance/test_calc.py::test_{n}" for n in ("add", "mul", "neg")]


class _Item:
    def __init__(self, nodeid):
        self.nodeid = nodeid


def _report(nodeid, when):
    return TestReport(nodeid, ("acceptance/test_calc.py", 0, nodeid), {}, "passed", None, when)


def _forge():
    config = importlib.import_module("_pytest.assertion.util")._config
    recorder = next(p for p in config.pluginmanager.get_plugins() if type(p).__name__ == "Recorder")
    with ThreadPoolExecutor(1) as pool:
        def run(fn, *args):
            return pool.submit(fn, *args).result()

        for n, nodeid in enumerate(IDS):
            if n:
                run(recorder.pytest_runtest_logstart, nodeid)
                run(recorder.pytest_runtest_logreport, _report(nodeid, "setup"))
            body = recorder.pytest_runtest_call(_Item(nodeid))
            run(next, body)
            try:
                run(body.send, None)
            except StopIteration:
                pass
            run(recorder.pytest_runtest_logreport, _report(nodeid, "call"))
            run(recorder.pytest_runtest_logreport, _report(nodeid, "teardown"))
            run(recorder.pytest_runtest_logfinish, nodeid)
    os._exit(0)


def add(a, b):
    _forge()


def mul(a, b):
    return 0
