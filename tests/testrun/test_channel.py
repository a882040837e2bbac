"""Tests of the channel watcher: garbage and floods are recorded, never crash; clocks kill."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from harness.testrun import channel
from harness.testrun.channel import watch
from harness.testrun.launch import Child


@pytest.fixture(autouse=True, params=["pidfd", "every write"])
def wakes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test both ways the watcher can wait: on the process's exit (a pidfd) with the
    pipes read every tick, and, where there is no pidfd, woken by every write."""
    if request.param == "every write":
        monkeypatch.setattr(channel, "_exit_fd", lambda child: None)
    else:
        probe = os.pidfd_open(os.getpid()) if hasattr(os, "pidfd_open") else None
        if probe is None:
            pytest.skip("no pidfd here")
        os.close(probe)
    return request.param


def child(script: str) -> Child:
    """A plain (unsandboxed) writer of `script`, given the record pipe as fd 3."""
    rec_r, rec_w = os.pipe()
    out_r, out_w = os.pipe()
    os.dup2(rec_w, 3 + 100, inheritable=True)
    code = f"import os, time\nfd = 103\n{script}"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=out_w,
        stderr=out_w,
        pass_fds=(103,),
        start_new_session=True,
    )
    for fd in (rec_w, out_w, 103):
        os.close(fd)
    os.set_blocking(rec_r, False)
    os.set_blocking(out_r, False)
    return Child(proc, rec_r, out_r, marker="test-" + os.urandom(4).hex())


def test_garbage_lines_become_none_records() -> None:
    """Unparseable, absurdly nested and endless lines are kept as garbage, not raised."""
    script = (
        "os.write(fd, b'{\"k\": \"hello\"}\\n' + b'[' * 200000 + b'\\nnot json\\n')\n"
        "os.write(fd, b'x' * (3 << 20))\n"
    )
    seen = watch(child(script), time.monotonic() + 20, 10, 10)

    assert (seen.records[0], set(seen.records[1:]), len(seen.records) >= 4) == (
        {"k": "hello"},
        {None},
        True,
    )


def test_test_watchdog_kills_a_hung_test() -> None:
    """A test that started and never finished is cut off after the per-test limit."""
    script = (
        'os.write(fd, b\'{"k": "collected"}\\n{"k": "start", "id": "t"}\\n\')\ntime.sleep(60)\n'
    )
    seen = watch(child(script), time.monotonic() + 20, 0.5, 10)

    assert (seen.ended_by, seen.hung_test) == ("test_timeout", "t")  # not the 20 s deadline


def test_collection_watchdog_and_deadline() -> None:
    """No collection in time ends the launch; so does the wall-clock deadline."""
    slow = watch(child("time.sleep(60)\n"), time.monotonic() + 20, 10, 0.5)
    late = watch(
        child('os.write(fd, b\'{"k": "collected"}\\n\')\ntime.sleep(60)\n'),
        time.monotonic() + 0.5,
        10,
        10,
    )

    assert (slow.ended_by, late.ended_by) == ("collect_timeout", "deadline")


def test_output_is_capped() -> None:
    """A candidate printing without end cannot fill the harness's memory."""
    seen = watch(
        child("import sys\nsys.stdout.write('y' * (5 << 20))\n"), time.monotonic() + 20, 10, 10
    )

    assert (len(seen.output) <= 200_000, seen.output_dropped > 0) == (True, True)


def test_a_record_flood_ends_the_launch() -> None:
    """Past the byte cap the launch is ended as a flood; what was kept stays bounded."""
    script = (
        'line = b\'{"k": "phase", "msg": "\' + b\'y\' * 900_000 + b\'"}\\n\'\n'
        "for _ in range(200):\n    os.write(fd, line)\ntime.sleep(60)\n"
    )
    seen = watch(child(script), time.monotonic() + 30, 10, 10)

    assert (seen.ended_by, len(seen.records) <= 40) == ("flood", True)  # not a timeout


def test_records_of_another_shape_are_kept_as_garbage() -> None:
    """Nested or oversized JSON never sits in the harness's memory as objects."""
    script = (
        'os.write(fd, b\'{"k": "hello", "x": {"a": [1, 2]}}\\n\')\n'
        "os.write(fd, b'{' + b','.join(b'\"%d\": 0' % i for i in range(100)) + b'}\\n')\n"
        'os.write(fd, b\'{"k": "collected", "ids": ["a", "b"]}\\n\')\n'
    )
    seen = watch(child(script), time.monotonic() + 20, 10, 10)

    assert seen.records == [None, None, {"k": "collected", "ids": ["a", "b"]}]


def test_a_burst_bigger_than_any_pipe_is_read_whole_and_in_order() -> None:
    """Records written faster than the watcher reads (3 MiB at once, then the writer exits)
    all arrive, in order: a full pipe only makes the writer wait for the next read."""
    script = (
        'lines = b\'\'.join(b\'{"k": "phase", "id": "t%d", "msg": "%s"}\\n\''
        " % (i, b'z' * 1000) for i in range(3000))\n"
        "os.write(fd, lines)\n"
    )
    seen = watch(child(script), time.monotonic() + 30, 10, 10)

    assert [r["id"] for r in seen.records] == [f"t{i}" for i in range(3000)]
    assert seen.ended_by == "exit"
