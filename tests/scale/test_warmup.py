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


# In a fresh interpreter, as a warm process is: its warm-up, then which vendor SDKs are loaded
# and how many objects the garbage collector still walks against how many it froze.
_LOADED = """
import gc, importlib, json, sys
importlib.import_module(sys.argv[1])
sdks = sorted(m for m in ("anthropic", "google.genai") if m in sys.modules)
print(json.dumps([sdks, len(gc.get_objects()), gc.get_freeze_count()]))
"""


def _loaded(warmup: str) -> list:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, warmup], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_the_plain_warm_up_loads_no_vendor_sdk_and_the_live_one_both() -> None:
    """The warm process simulated and replayed tasks are forked from imports no vendor SDK;
    the one live tasks are forked from has both."""
    assert _loaded("harness.scale.warmup")[0] == []
    assert _loaded("harness.scale.warmup_vendors")[0] == ["anthropic", "google.genai"]


@pytest.mark.parametrize("warmup", ["harness.scale.warmup", "harness.scale.warmup_vendors"])
def test_a_warm_up_leaves_its_objects_out_of_the_collectors_walks(warmup: str) -> None:
    """After a warm-up, what it loaded is frozen: a shard forked from it never walks (and so
    never copies) those objects in its own collections."""
    _, walked, frozen = _loaded(warmup)

    assert frozen > 10_000
    assert walked < frozen / 100


def test_a_worker_holding_a_vendor_key_starts_with_the_sdks_and_one_without_does_not(
    monkeypatch,
) -> None:
    """A worker whose environment has a vendor's key can serve a live night: it warms the
    vendor SDKs before its first task; without one it warms the plain process only."""
    from harness.scale import warm

    for name in warm.VENDOR_KEYS:
        monkeypatch.delenv(name, raising=False)
    assert warm.first_kind() == "plain"
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyE2EFAKEFAKEFAKEFAKEFAKEBENCH000")
    assert warm.first_kind() == "vendors"
