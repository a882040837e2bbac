"""A wall-clock limit on reading one answer, which the SDKs' timeouts do not give.

httpx's read timeout is per read: a body dripped a byte at a time, or a stream of SSE
keep-alive comments that never completes an event (a gateway whose upstream died), resets it
forever, and the worker hangs all night holding its reservation. `ReadDeadline` closes a
response still being read when its time is up; the blocked read then fails as a transport
error, which the adapters classify as an unknown outcome (charged its reservation, retried).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ReadDeadline", "Watch"]


class Watch:
    """One request's deadline: `expired` once it closed the response."""

    def __init__(self, until: float) -> None:
        self.until = until
        self.expired = False
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def arm(self, response: Any) -> None:
        """Close `response` if it is still being read at `until`."""
        timer = threading.Timer(max(0.0, self.until - time.monotonic()), self._expire, [response])
        timer.daemon = True
        with self._lock:
            self.disarm()
            self._timer = timer
        timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self, response: Any) -> None:
        self.expired = True
        response.close()


class ReadDeadline:
    """Per-thread deadlines for the requests of one SDK client: `hook` is the client's
    response event hook; `within(seconds)` sets the deadline of the requests it surrounds."""

    def __init__(self) -> None:
        self._local = threading.local()

    @contextmanager
    def within(self, seconds: float) -> Iterator[Watch]:
        """Requests made in this block must be read in full `seconds` from now."""
        watch = Watch(time.monotonic() + seconds)
        self._local.watch = watch
        try:
            yield watch
        finally:
            self._local.watch = None
            with watch._lock:
                watch.disarm()

    def hook(self, response: Any) -> None:
        """httpx response hook: arm the current thread's deadline on this response."""
        watch = getattr(self._local, "watch", None)
        if watch is not None:
            watch.arm(response)
