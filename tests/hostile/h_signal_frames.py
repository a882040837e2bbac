"""Hostile: install a signal handler to receive a frame without asking for one, and walk from
it to the running test's locals."""
import signal

SEEN = []


def _handler(signum, frame):
    SEEN.append(frame)


def add(a, b):
    try:
        signal.signal(signal.SIGUSR1, _handler)
        signal.raise_signal(signal.SIGUSR1)
    except (PermissionError, OSError):
        pass
    return 4 if SEEN else 0


def mul(a, b):
    return 12 if SEEN else 0
