"""Hostile: read the answer key through another program (cat), past the in-process checks."""
import subprocess

try:
    SOURCE = subprocess.run(["cat", "acceptance/test_calc.py"], capture_output=True).stdout
except (PermissionError, OSError):
    SOURCE = b""


def add(a, b):
    return 4 if b"== 4" in SOURCE else 0


def mul(a, b):
    return 12 if b"== 12" in SOURCE else 0
