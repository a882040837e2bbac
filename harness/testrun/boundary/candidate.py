"""The candidate process's main loop: import the candidate when asked, answer requests.

Runs in a sandbox of its own whose file system holds the candidate, the support files and
this package, never a test file. Everything it sends is checked on the test side, so nothing
here needs defending against the candidate: it may rewrite all of it and gain nothing but the
values it could send anyway. Output, log records and warnings ride along with each message.
Standard library only (copied into the sandbox).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import warnings

from . import wire


def serve(fd: int, support: list[str]) -> None:
    """Answer the test side on the socket `fd` until it closes; then exit at once."""
    side = wire.Side(socket.socket(fileno=fd), frozenset(support), strict=False)
    sys.stdout = wire.Capture(side, "o")  # type: ignore[assignment]
    sys.stderr = wire.Capture(side, "e")  # type: ignore[assignment]
    root = logging.getLogger()
    root.addHandler(wire.Relay(side))
    root.setLevel(logging.DEBUG)  # the test side's loggers decide what is kept
    warnings.simplefilter("always")
    warnings.showwarning = wire.relay_warning(side)
    with contextlib.suppress(wire.BoundaryError, OSError):
        side.serve_forever()
    os._exit(0)
