"""`make demo-cluster`: the demo night across two workers on a local Temporal dev server.

Starts what it needs (the dev server on a free loopback port, an embedded PostgreSQL, two
`harness worker`s), runs tasks/example on the simulator with `make demo`'s seed into
runs/demo-cluster, prints the summary, and stops everything it started, by pid.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["embedded_postgres", "main", "process", "temporal_dev_server"]

HARNESS = [sys.executable, "-m", "harness"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def process(argv: list[str], **kwargs) -> Iterator[subprocess.Popen]:
    """A process for the length of the block, then SIGTERM and wait (by its pid)."""
    proc = subprocess.Popen(argv, **kwargs)
    try:
        yield proc
    finally:
        proc.terminate()  # SIGTERM: a worker hands back what it runs, the server stops
        proc.wait()


@contextlib.contextmanager
def temporal_dev_server() -> Iterator[str]:
    """A Temporal dev server on a free loopback port, in memory: its address."""
    port = _free_port()
    binary = Path(sys.executable).parent / "temporal"
    argv = [str(binary), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port)]
    argv += ["--headless", "--log-level", "error", "--http-port", str(_free_port())]
    argv += ["--metrics-port", str(_free_port())]
    with process(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        while proc.poll() is None:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"


@contextlib.contextmanager
def embedded_postgres(where: Path) -> Iterator[str]:
    """An embedded PostgreSQL (pgserver) with its data in `where`: its URL.

    Run as root, pgserver serves the data as a user of its own and opens every folder above
    the data to others so that user can reach it (a 0700 home would become 0755). The data
    then lives in a folder of its own under the system's temporary folder, whose parents
    are open already, and `where` is only a link to it: nothing outside that folder changes
    its permissions."""
    import pgserver

    data, own = where, None
    if os.geteuid() == 0:
        own = Path(tempfile.mkdtemp(prefix="harness-pg-"))
        own.chmod(0o755)  # the folder's own permission: pgserver's user must enter it
        data = own / "data"
        where.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            where.unlink()
        where.symlink_to(data, target_is_directory=True)
    server = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        if own is not None:
            where.unlink(missing_ok=True)
            shutil.rmtree(own, ignore_errors=True)


def main(argv: list[str]) -> int:
    seed, run_dir = argv[0], Path("runs/demo-cluster")
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.rmtree("tasks/example/out", ignore_errors=True)
    run_dir.mkdir(parents=True)
    with temporal_dev_server() as address, embedded_postgres(run_dir / ".postgres") as database:
        config = run_dir / "cluster.yaml"
        config.write_text(
            "scale:\n  engine: temporal\n"
            f"  temporal: {{address: '{address}', task_queue: demo-cluster, heartbeat_s: 5}}\n"
            f"  database: '{database}'\n"
        )
        worker = [*HARNESS, "worker", "--config", str(config), "--log-level", "warning"]
        with process(worker), process(worker):
            night = [*HARNESS, "run", "tasks/example/tasks.yaml", "--provider", "sim"]
            night += ["--seed", seed, "--run-dir", str(run_dir), "--config", str(config)]
            return subprocess.run([*night, "--log-level", "warning"]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
