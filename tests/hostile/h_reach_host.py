"""Hostile: reach the harness's world: its keys, its processes, its ledger and its run folder."""
import os


def _try(action):
    try:
        action()
        return "done"
    except OSError as exc:
        return type(exc).__name__


RESULTS = {
    "environ": _try(lambda: open(f"/proc/{os.getppid()}/environ", "rb").read()),
    "signal_harness": _try(lambda: os.kill(os.getppid(), 0)),
    "signal_bystander": _try(lambda: os.kill(__BYSTANDER__, 0)),
    "ledger": _try(lambda: open("__LEDGER__", "a").write("0.0,forged\n")),
    "run_dir": _try(lambda: open("__RUN_DIR__/summary.json", "w").write("{}")),
}


def add(a, b):
    raise AssertionError(repr(RESULTS))


def mul(a, b):
    return 0
