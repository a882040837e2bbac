"""Hostile: a double-forked daemon that outlives the run and writes later."""
import os
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(0.5)
        try:
            with open("__ALIVE_FILE__", "w") as fh:
                fh.write("still here")
        except OSError:
            pass
        for fd in range(3, 1024):
            try:
                os.write(fd, b'{"k": "end"}\n')
            except OSError:
                pass
        time.sleep(60)
    os._exit(0)


def add(a, b):
    return 0


def mul(a, b):
    return 0
