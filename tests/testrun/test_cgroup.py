"""The launch's cgroups: the memory cap holds for every process of a launch together."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.testrun import cgroup

# Four processes of 48 MiB each: under any per-process cap, over a 64 MiB cap for all of them.
_HOG = """
import os, sys, time
for _ in range(3):
    if os.fork() == 0:
        break
block = bytearray(48 << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
time.sleep(0.5)
"""


@pytest.fixture
def group():
    """A launch cgroup with a 64 MiB memory cap, or a skip saying why there is none here."""
    if os.geteuid() != 0:
        pytest.skip("cgroups are only made for launches by a root harness")
    path = cgroup.create(16, None, memory_mb=64)
    if path is None:
        pytest.skip("no writable pids cgroup here")
    groups = cgroup.companions(path)
    if len(groups) == 1 and not (path / "memory.max").exists():
        cgroup.destroy(path)
        pytest.skip("no writable memory cgroup here (v1 memory hierarchy or v2 controller)")
    yield groups
    cgroup.destroy(path)


def _join(groups: list[Path]) -> None:
    for path in groups:
        (path / "cgroup.procs").write_text(str(os.getpid()))


def test_a_launch_cannot_hold_more_memory_than_its_cap_across_processes(group) -> None:
    """Four forked processes that each stay under any per-process limit are stopped together."""
    done = subprocess.run(
        [sys.executable, "-c", _HOG], preexec_fn=lambda: _join(group), capture_output=True
    )

    assert done.returncode != 0


def test_destroy_removes_every_group_of_the_launch(group) -> None:
    """The memory group goes with the pids group: nothing of a launch is left behind."""
    cgroup.destroy(group[0])

    assert [p.exists() for p in group] == [False] * len(group)
