"""A distributed night's status and exit code are the worst of its tasks', in the order a
local night decides them (halted, budget stopped, interrupted)."""

from __future__ import annotations

from decimal import Decimal

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from harness.errors import ExitCode
from harness.results import RunStatus
from harness.scale import activities
from harness.scale.payloads import Night

NIGHT = Night("r", "/t.yaml", "/runs", 2, "sim", 0, "5", None, 30.0)
CODE = {
    RunStatus.HALTED: ExitCode.HALTED,
    RunStatus.BUDGET_STOPPED: ExitCode.BUDGET,
    RunStatus.INTERRUPTED: ExitCode.INTERRUPTED,
    RunStatus.COMPLETED: ExitCode.OK,
}


def _part(status: RunStatus) -> dict:
    return {
        "started_at": "2026-11-26T00:00:00+00:00",
        "finished_at": "2026-11-26T01:00:00+00:00",
        "status": status.value,
        "notes": [],
        "task": {},
        "exit": int(CODE[status]),
        "spent": Decimal(0),
    }


@pytest.mark.parametrize(
    ("a", "b", "worst"),
    [
        (RunStatus.BUDGET_STOPPED, RunStatus.INTERRUPTED, RunStatus.BUDGET_STOPPED),
        (RunStatus.INTERRUPTED, RunStatus.HALTED, RunStatus.HALTED),
        (RunStatus.COMPLETED, RunStatus.INTERRUPTED, RunStatus.INTERRUPTED),
        (RunStatus.HALTED, RunStatus.BUDGET_STOPPED, RunStatus.HALTED),
    ],
)
def test_the_night_takes_the_local_order_of_statuses_and_exit_codes(a, b, worst):
    """Two tasks' shards ending `a` and `b`: the night's status and exit code are those a local
    night gives when both happened to it (runner.pool: halted, then budget, then interrupted)."""
    for parts in ([_part(a), _part(b)], [_part(b), _part(a)]):
        assert activities._merged(NIGHT, parts)["status"] == worst.value
        codes = [ExitCode(p["exit"]) for p in parts]
        assert activities._worst(activities._EXIT_ORDER, codes) == CODE[worst]


def test_a_shards_refused_input_behind_a_failed_night_is_bad_input():
    """A night failed by a shard's BadInput (through its slice and activity) reaches
    `harness run` as bad input (exit 2); any other failure is not taken for one."""
    from temporalio.client import WorkflowFailureError
    from temporalio.exceptions import ApplicationError

    from harness.scale.client import bad_input

    def chain(inner: BaseException) -> BaseException:
        try:
            try:
                raise inner
            except BaseException as exc:
                raise RuntimeError("the slice failed") from exc
        except RuntimeError as middle:
            return WorkflowFailureError(cause=middle)

    refusal = bad_input(chain(ApplicationError("task t0: bad input", type="BadInput")))
    assert refusal is not None and "task t0: bad input" in str(refusal)
    assert bad_input(chain(ApplicationError("shard exited 1", type="Other"))) is None
