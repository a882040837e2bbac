"""The night at batch price: every batched step (write, review, rewrite, fix) goes to the
vendors' batch APIs in rounds.

Each task's paid call blocks here (the Caller asks `wait` before it buys a request
interactively). A round is submitted as soon as every running task waits, or when the
oldest waiter has waited `window_s` (a task still running its tests joins the next round):
all the waiting requests, one batch per provider and model, through the same `BatchNight`
machinery as the first writes (reserve at the batch price, record, poll, settle, record the
reply as this run's call). When the round has ended each waiter returns, and the Caller
finds its reply recorded; an entry that did not succeed (errored, expired, cancelled at the
deadline) finds nothing and is bought interactively. No round is submitted that the last round's
turnaround would carry past the night's deadline (stop-by-morning), nor any after it: the
remaining steps go interactive (a round still out at the deadline is cancelled). A resumed
run asks for the same requests (same task, step, attempt and prompt) and re-attaches to the
open batches the store records instead of submitting them again.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Collection

import structlog

from harness.llm import CallRequest
from harness.runner.batch.night import BatchNight

__all__ = ["Rounds"]

log = structlog.get_logger()


class Rounds:
    """The round collector (see the module docstring)."""

    def __init__(
        self,
        night: Callable[[], BatchNight],
        steps: Collection[str],
        *,
        deadline: float,
        window_s: float,
        stop: threading.Event,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._night = night  # a fresh BatchNight per round, sharing the run's store and vendors
        self._steps = frozenset(steps)
        self._deadline, self._window_s, self._stop, self._clock = deadline, window_s, stop, clock
        self._cond = threading.Condition()
        self._running: set[str] = set()
        self._waiting: dict[int, tuple[CallRequest, float]] = {}  # ticket → (request, since)
        self._finished: set[int] = set()
        self._tickets = itertools.count()
        self._busy = False
        self.rounds = 0  # rounds submitted (tests and the summary read it)
        self.turnaround_s = 0.0  # the last round's, submission to end: the next one's estimate
        self._probe = night()

    def enter(self, task_id: str) -> None:
        """A task started on the pool: a round waits for it too."""
        with self._cond:
            self._running.add(task_id)

    def leave(self, task_id: str) -> None:
        """A task ended: a round no longer waits for it."""
        with self._cond:
            self._running.discard(task_id)
            self._cond.notify_all()

    def takes(self, request: CallRequest) -> bool:
        """Whether this request goes by batch: a batched step, no tool rounds, a provider
        with a batch API, before the deadline and while the run goes on."""
        return (
            request.step in self._steps
            and not request.tools
            and not request.rounds
            and self._probe.batchable(request)
            and self._in_time()
            and not self._stop.is_set()
        )

    def _in_time(self) -> bool:
        """Whether a round submitted now would end by the deadline, if it takes as long as
        the last one did."""
        return self._clock() + self.turnaround_s < self._deadline

    def wait(self, request: CallRequest) -> bool:
        """Block until the round carrying `request` has ended; False when it does not go by
        batch (the Caller then buys it interactively at once)."""
        if not self.takes(request):
            return False
        with self._cond:
            ticket = next(self._tickets)
            self._waiting[ticket] = (request, self._clock())
            self._cond.notify_all()
            while ticket not in self._finished:
                if not self._busy and self._ready():
                    self._run_round()
                else:
                    self._cond.wait(timeout=self._pause())
            self._finished.discard(ticket)
        return True

    def _ready(self) -> bool:
        if not self._waiting:
            return False
        if self._stop.is_set() or not self._in_time():
            return True
        waiting_tasks = {r.task_id for r, _ in self._waiting.values()}
        if self._running <= waiting_tasks:
            return True
        oldest = min(since for _, since in self._waiting.values())
        return self._clock() - oldest >= self._window_s

    def _pause(self) -> float:
        return max(0.01, min(self._window_s, 1.0))

    def _run_round(self) -> None:
        """Take every waiting request and run their round (the lock released meanwhile). The
        round belongs to the night, not to the task whose thread runs it: its lines carry
        the run's context alone (each settled entry's call line names its own task)."""
        taken = dict(self._waiting)
        self._waiting.clear()
        self._busy = True
        self._cond.release()
        bound = structlog.contextvars.get_contextvars()
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(**{k: v for k, v in bound.items() if k == "run_id"})
        try:
            requests = [r for r, _ in taken.values()]
            if not self._stop.is_set() and self._in_time():
                self.rounds += 1
                log.info("batch_round", round=self.rounds, requests=len(requests))
                submitted = self._clock()
                night = self._night()
                if night.start(requests):
                    night.poll()
                    self.turnaround_s = max(0.0, self._clock() - submitted)
            else:
                log.info("batch_round_skipped", requests=len(requests), reason="deadline")
        finally:
            structlog.contextvars.clear_contextvars()
            structlog.contextvars.bind_contextvars(**bound)
            self._cond.acquire()
            self._busy = False
            self._finished.update(taken)
            self._cond.notify_all()
