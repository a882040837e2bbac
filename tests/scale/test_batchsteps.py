"""What a batch step carries to its process: ids, paths and numbers, read back the same."""

from __future__ import annotations

import dataclasses
import json

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from harness.scale.batchflow import BatchStep
from harness.scale.batchsteps import _step_from
from harness.scale.payloads import Night, Shard


def test_a_batch_step_round_trips_through_the_json_its_process_reads() -> None:
    """The step's argv is plain JSON of the shard, the workflow's time and the interval."""
    night = Night("r1", "/t/tasks.yaml", "/runs", 1, "sim", 2, "5", None, 30.0, batch=True)
    step = BatchStep(Shard(night, "a"), now=1_800_000_000.5, interval=3600.0)

    assert _step_from(json.loads(json.dumps(dataclasses.asdict(step)))) == step
