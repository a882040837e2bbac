"""`harness run` and `harness worker` with `scale.engine: temporal`, without a server."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from harness.cli import main
from tests._night import Task, write_tasks


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The harness in a process of its own, as cron runs it, with an exit hook that says whether
# the interpreter finalized: a process that started Temporal's client must not (its Rust
# runtime may abort the finalizing interpreter: temporalio/sdk-python#300).
_WATCHED = (
    "import atexit, runpy, sys; "
    "atexit.register(lambda: print('FINALIZED', file=sys.stderr)); "
    "sys.argv = ['harness', *sys.argv[1:]]; "
    "runpy.run_module('harness', run_name='__main__')"
)


def _harness(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WATCHED, *argv], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", ["run", "worker", "stop"])
def test_a_temporal_server_that_cannot_be_reached_is_exit_2_and_never_an_abort(
    tmp_path, command
) -> None:
    """`run`, `worker` and `stop --config` that cannot reach Temporal exit 2 naming the
    address to fix; the process ends without finalizing the interpreter, so the client's
    runtime cannot turn that exit into SIGABRT (`Fatal Python error: PyGILState_Release`)."""
    config = tmp_path / "cluster.yaml"
    address = f"127.0.0.1:{_closed_port()}"
    config.write_text(f"scale: {{engine: temporal, temporal: {{address: '{address}'}}}}\n")
    tasks = write_tasks(tmp_path / "tasks", [Task("a", solved=True)])
    argv = {
        "run": ["run", str(tasks), "--provider", "sim", "--run-dir", str(tmp_path / "runs")],
        "worker": ["worker"],
        "stop": ["stop", "20261126-0100-ab"],
    }[command]

    done = _harness(*argv, "--config", str(config))

    assert (
        done.returncode,
        f"scale.temporal.address {address}: cannot connect" in done.stderr,
    ) == (
        2,
        True,
    ), done.stderr
    assert ("FINALIZED" in done.stderr, "Fatal Python error" in done.stderr) == (False, False)


def test_stop_on_temporal_needs_the_run_id(tmp_path, capsys) -> None:
    """Without RUN there is no `latest` to fall back on across machines: exit 2 saying so."""
    config = tmp_path / "cluster.yaml"
    config.write_text("scale: {engine: temporal}\n")

    code = main(["stop", "--config", str(config)])

    assert (code, "name the night's run id" in capsys.readouterr().err) == (2, True)
