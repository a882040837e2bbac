"""Hostile: delete files outside the scratch directory."""
import os
import shutil

for victim in ("__CANARY__",):
    shutil.rmtree(victim, ignore_errors=True)
    try:
        os.remove(os.path.join(victim, "precious.txt"))
    except OSError:
        pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
