"""Hostile: an infinite loop in one test that ignores the in-process timeout signal."""
import signal


def add(a, b):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        try:
            pass
        except BaseException:
            pass


def mul(a, b):
    return a * b + 1
