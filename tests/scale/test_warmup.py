"""The warm process's warm-up (harness/scale/warmup.py) leaves a shard nothing to import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from tests._night import Task, write_tasks

# In a fresh interpreter, as the warm process is: the warm-up, then one task's shard run in
# that process; which harness modules the shard imported that the warm-up had not.
_PROBE = """
import json, sys
import harness.scale.warmup
from harness.scale.payloads import Night, Shard
from harness.scale.shard import run_shard
before = set(sys.modules)
night = Night(run_id="20261127-000000-warm", tasks=sys.argv[1], run_dir=sys.argv[2],
              task_count=1, provider="sim", seed=0, cap_usd="1", config=None, heartbeat_s=10)
code = run_shard(Shard(night, "t0"))
new = sorted(m for m in set(sys.modules) - before if m.startswith("harness"))
print(json.dumps([int(code), new]))
"""


def test_a_shard_imports_no_harness_module_the_warm_up_did_not(tmp_path: Path) -> None:
    """A task run in a process that has the warm-up loaded (a shard forked from a worker's
    warm process) passes and imports no module of the harness on its own."""
    tasks = write_tasks(tmp_path / "tasks", [Task("t0", solved=True)])
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tasks), str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        check=True,
    )

    assert json.loads(done.stdout.splitlines()[-1]) == [0, []]
