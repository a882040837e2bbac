"""Hostile: flood every output it has, from inside a test: every descriptor it can write to
(the record pipe, and pytest's saved stdout and stderr: the output pipe) with records just
under the line cap. (sys.stdout is pytest's capture file, which RLIMIT_FSIZE bounds.)"""
import os

CHUNK = b'{"k": "phase", "msg": "' + b"y" * 1_000_000 + b'"}\n'  # one record, under 1 MiB


def add(a, b):
    for _round in range(4096):
        for fd in range(3, 1024):
            try:
                os.write(fd, CHUNK)
            except OSError:
                pass
    return 0


def mul(a, b):
    return 0
