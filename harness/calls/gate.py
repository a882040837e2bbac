"""One call at a time to a provider until it has shown that it accepts the credentials."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["CredentialGate"]


class CredentialGate:
    """Until a provider has answered one request without refusing the key, its requests go
    out one at a time, so a revoked key or an unpaid account is refused once, not once per
    worker: the first refusal halts the run before the next request is sent."""

    def __init__(self) -> None:
        self._one_at_a_time = threading.Lock()
        self._proven = threading.Event()

    @contextmanager
    def passage(self) -> Iterator[None]:
        """Held around one request: free once proven, else exclusive."""
        if self._proven.is_set():
            yield
            return
        with self._one_at_a_time:
            yield

    def prove(self) -> None:
        """The provider answered without refusing the credentials: let requests run in parallel."""
        self._proven.set()
