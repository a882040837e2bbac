"""`harness run` and `harness worker` with `scale.engine: temporal`, without a server."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")

from harness.cli import main


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_worker_without_a_server_is_bad_input(tmp_path, capsys) -> None:
    """A worker that cannot reach Temporal exits 2 naming the address to fix."""
    config = tmp_path / "cluster.yaml"
    address = f"127.0.0.1:{_closed_port()}"
    config.write_text(f"scale: {{engine: temporal, temporal: {{address: '{address}'}}}}\n")

    code = main(["worker", "--config", str(config)])

    assert code == 2
    assert f"scale.temporal.address {address}: cannot connect" in capsys.readouterr().err


def test_stop_without_a_server_is_bad_input(tmp_path, capsys) -> None:
    """`harness stop RUN --config` that cannot reach Temporal exits 2 naming the address."""
    config = tmp_path / "cluster.yaml"
    address = f"127.0.0.1:{_closed_port()}"
    config.write_text(f"scale: {{engine: temporal, temporal: {{address: '{address}'}}}}\n")

    code = main(["stop", "20261126-0100-ab", "--config", str(config)])

    assert code == 2
    assert f"scale.temporal.address {address}: cannot connect" in capsys.readouterr().err


def test_stop_on_temporal_needs_the_run_id(tmp_path, capsys) -> None:
    """Without RUN there is no `latest` to fall back on across machines: exit 2 saying so."""
    config = tmp_path / "cluster.yaml"
    config.write_text("scale: {engine: temporal}\n")

    code = main(["stop", "--config", str(config)])

    assert (code, "name the night's run id" in capsys.readouterr().err) == (2, True)
