"""The round collector's deadline on a clock of its own: a round the last round's turnaround
would carry past stop-by-morning is not submitted, and its steps go interactive."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from harness.llm import CallRequest, Prompt, Route
from harness.runner.batch.rounds import Rounds

ROUTE = Route("mid", "sim", "claude-sonnet-5-5", 1000)


class Clock:
    """Seconds that pass only when a round's batch is out at the vendor."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Vendor:
    """A batch phase whose every batch ends `turnaround_s` after its submission."""

    def __init__(self, clock: Clock, turnaround_s: float) -> None:
        self.clock, self.turnaround_s = clock, turnaround_s
        self.submitted: list[list[str]] = []

    def __call__(self) -> Vendor:
        return self  # one phase per round; this fake keeps no state between them

    def batchable(self, request: CallRequest) -> bool:
        return True

    def start(self, requests: Sequence[CallRequest]) -> set[str]:
        self.submitted.append([r.step for r in requests])
        return {r.task_id for r in requests}

    def poll(self) -> None:
        self.clock.now += self.turnaround_s


def _request(step: str, attempt: int) -> CallRequest:
    return CallRequest(ROUTE, Prompt("s", "stable", "variable"), "t1", step, attempt)


def _night(deadline: float, turnaround_s: float) -> tuple[list[bool], Vendor]:
    """One task's write, review and two fixes in turn; for each, whether it went by batch."""
    clock = Clock()
    vendor = Vendor(clock, turnaround_s)
    rounds = Rounds(
        vendor,
        ("write", "review", "rewrite", "fix"),
        deadline=deadline,
        window_s=1.0,
        stop=threading.Event(),
        clock=clock,
    )
    rounds.enter("t1")
    steps = [("write", 1), ("review", 1), ("fix", 2), ("fix", 3)]
    return [rounds.wait(_request(step, n)) for step, n in steps], vendor


def test_a_round_that_would_end_past_the_deadline_is_not_submitted() -> None:
    """Rounds of an hour against a deadline 2.5 hours out: two end in time, the third
    would not (it is never submitted), so it and every later step go interactive."""
    batched, vendor = _night(deadline=2.5 * 3600, turnaround_s=3600)

    assert (batched, vendor.submitted) == ([True, True, False, False], [["write"], ["review"]])


def test_every_round_goes_by_batch_when_each_ends_in_time() -> None:
    """Rounds of ten minutes against a deadline hours out: every step by batch."""
    batched, vendor = _night(deadline=8 * 3600, turnaround_s=600)

    assert (batched, len(vendor.submitted)) == ([True, True, True, True], 4)
