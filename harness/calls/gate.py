"""One call at a time to a provider until it has shown that it accepts the credentials; the
night's halt on a refused key. Per process (`LocalGates`), or shared by every worker of a
distributed night through `scale.database` (`calls.shared.SharedGates`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Protocol

from harness.llm import AuthenticationError

__all__ = ["DEFAULT_SLOTS", "CredentialGate", "Gates", "LocalGates"]


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


# A provider's concurrent requests when `concurrency.providers` does not name it.
DEFAULT_SLOTS = 4


class Gates(Protocol):
    """Every provider's credential gate and the night's halt, as far as the night reaches."""

    def passage(self, provider: str) -> AbstractContextManager[None]:
        """Held around one request to `provider` (exclusive until the provider is proven)."""
        ...

    def prove(self, provider: str) -> None: ...

    def slot(self, provider: str, stopping: Callable[[], bool]) -> AbstractContextManager[None]:
        """Held around one request to `provider`, inside this process's own slot: one of the
        provider's `concurrency.providers` slots as far as the night reaches (a no-op when
        the night is this process, whose own slots already count every request). A wait for
        a slot ends without one once `stopping()` is true: the caller, which checks its stop
        right after, then sends nothing."""
        ...

    def halt(self, refusal: AuthenticationError) -> None:
        """Tell the rest of the night: the key or account was refused."""
        ...

    def halted(self) -> AuthenticationError | None:
        """A refusal some other part of the night met, checked before every reservation."""
        ...


class LocalGates:
    """The gates of one process: the night is this process, so a halt needs no telling."""

    def __init__(self) -> None:
        self._gates: dict[str, CredentialGate] = {}
        self._lock = threading.Lock()

    def passage(self, provider: str) -> AbstractContextManager[None]:
        return self._gate(provider).passage()

    def prove(self, provider: str) -> None:
        self._gate(provider).prove()

    def slot(self, provider: str, stopping: Callable[[], bool]) -> AbstractContextManager[None]:
        return nullcontext()

    def halt(self, refusal: AuthenticationError) -> None:
        """The Caller that met the refusal already stops this process's night."""

    def halted(self) -> AuthenticationError | None:
        return None

    def _gate(self, provider: str) -> CredentialGate:
        with self._lock:
            return self._gates.setdefault(provider, CredentialGate())
