"""Work a task starts early and joins before it needs it: the expected test ids, collected
while the first model call is out."""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from harness.tasks import TaskSpec

__all__ = ["Background"]

log = structlog.get_logger()


class Background:
    """One call of `work(spec)` on a thread of its own; `join` waits for it (idempotent).

    A failure is only logged: the first test run repeats the work on its own path and
    reports the fault there, as it would have without the head start.
    """

    def __init__(self, work: Callable[[TaskSpec], None], spec: TaskSpec) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(work, spec), name=f"expect-{spec.id}", daemon=True
        )
        self._thread.start()

    @staticmethod
    def _run(work: Callable[[TaskSpec], None], spec: TaskSpec) -> None:
        try:
            work(spec)
        except Exception as exc:
            log.info("expected_tests_deferred", task_id=spec.id, error=str(exc))

    def join(self) -> None:
        self._thread.join()
