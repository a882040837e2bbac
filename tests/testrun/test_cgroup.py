"""The launch's cgroups: the memory cap holds for every process of a launch together."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.testrun import cgroup

# Four processes of 48 MiB each: under any per-process cap, over a 64 MiB cap for all of them.
# Each holds its memory until all four have theirs (or one is gone), so they hold it at the
# same time however the machine schedules them; the exit status is 0 only if all four did.
_HOG = """
import os, select, sys
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        block = bytearray(48 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        os.write(ready_w, b"x")
        os.read(go_r, 1)  # until the parent lets go, or dies
        os._exit(0)
    kids.append(pid)
os.close(ready_w)
os.close(go_r)
block = bytearray(48 << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
got = b""
while len(got) < 3 and select.select([ready_r], [], [], 60)[0]:
    chunk = os.read(ready_r, 3 - len(got))
    if not chunk:
        break
    got += chunk
os.close(go_w)
statuses = [os.waitpid(kid, 0)[1] for kid in kids]
sys.exit(0 if len(got) == 3 and statuses == [0, 0, 0] else 1)
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
