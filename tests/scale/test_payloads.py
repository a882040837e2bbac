"""What travels through Temporal: ids and paths, and each task's share of the night's cap."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from harness.scale.payloads import Night, Shard, workflow_id


def _night(cap: str, tasks: int) -> Night:
    return Night(
        run_id="r1",
        tasks="/t/tasks.yaml",
        run_dir="/runs",
        task_count=tasks,
        provider="sim",
        seed=2,
        cap_usd=cap,
        config=None,
        heartbeat_s=30.0,
    )


@given(
    cents=st.integers(min_value=0, max_value=10**8),
    tasks=st.integers(min_value=1, max_value=10_000),
)
def test_the_tasks_shares_never_add_up_past_the_nights_cap(cents: int, tasks: int) -> None:
    """Every task's run cap is an equal share, rounded down: together they fit the cap."""
    night = _night(str(Decimal(cents) / 100), tasks)

    assert Decimal(str(night.task_cap_usd())) * tasks <= Decimal(night.cap_usd)


def test_with_the_shared_ledger_each_task_may_spend_the_whole_cap() -> None:
    """With scale.database every shard's cap is the night's: the shared run scope binds."""
    night = dataclasses.replace(_night("12.5", 4), shared_budget=True)

    assert night.task_cap_usd() == 12.5


def test_a_shard_round_trips_through_json() -> None:
    """A shard's payload is plain JSON (ids and paths) and reads back the same."""
    shard = Shard(_night("30", 4), "t1")

    assert Shard.from_json(shard.to_json()) == shard


def test_the_workflow_id_is_derived_from_the_run_id() -> None:
    """Starting the same night twice names the same workflow (the lock across machines)."""
    assert workflow_id("20261125-2200-ab") == "harness-night-20261125-2200-ab"
