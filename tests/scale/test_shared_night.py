"""What a night shares through `scale.database`: the day cap with local nights, and the halt
on a refused key across every worker of a Temporal night (fake vendors on loopback)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest
import structlog

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")
psycopg = pytest.importorskip("psycopg", reason="needs the scale extra (psycopg)")

from harness.cli import main  # noqa: E402
from harness.errors import ExitCode  # noqa: E402
from harness.results import usd  # noqa: E402
from tests.conftest import write  # noqa: E402
from tests.fakeserver import (  # noqa: E402
    anthropic_error,
    anthropic_sse,
    fake_vendors,
    gemini_reply,
)

pytestmark = pytest.mark.slow

HARNESS = [sys.executable, "-m", "harness"]
MID, CHEAP = "claude-sonnet-5-5", "gemini-3.8-flash"
SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
ROUTES = f"""
routes:
  cheap: {{provider: gemini, model: {CHEAP}, max_tokens: 16384}}
  mid: {{provider: anthropic, model: {MID}, max_tokens: 32000}}
  frontier: {{provider: anthropic, model: claude-opus-5-5, max_tokens: 64000}}
provider_timeout_s: 30
batch: {{enabled: false}}  # the day's spend here is the interactive calls'
"""


@pytest.fixture(autouse=True)
def restore_logging():
    """A run configures structlog to write its events file; undo that for later tests."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture
def vendors(monkeypatch: pytest.MonkeyPatch):
    """A fake Anthropic and a fake Gemini, reached through the SDKs' base-URL variables, which
    worker processes inherit."""
    anthropic_key, gemini_key = (
        "sk-ant-api03-SCALEFAKEKEYSCALEFAKEKEY",
        "AIzaSyE2EFAKEFAKEFAKEFAKEFAKESCALE000",
    )
    with fake_vendors(monkeypatch, anthropic_key, gemini_key) as both:
        yield both


def _task_list(task_dir: Path, count: int) -> Path:
    """The calc task `count` times over, each with an output of its own."""
    entries = "".join(
        f"- id: calc_{n}\n  reference: legacy/calc.py\n  tests: acceptance/test_calc.py\n"
        f"  output: out{n}/calc_service.py\n"
        for n in range(count)
    )
    return write(task_dir / "tasks.yaml", "tasks:\n" + textwrap.indent(entries, "  "))


def _scopes(url: str) -> dict[str, Decimal]:
    with psycopg.connect(url) as db:
        return {n: Decimal(s) for n, s in db.execute("SELECT name, spent_usd FROM scopes")}


def test_a_local_night_on_the_database_spends_from_the_shared_day(task_dir, vendors, database):
    """A local live night with scale.database keeps its day spend in the shared ledger, where
    every night on that database, local or on Temporal, holds against the same day cap."""
    anthropic, gemini = vendors
    anthropic.script(anthropic_sse(f"```python\n{SOLUTION}```\n", model=MID))
    gemini.script(gemini_reply("CLEAN", model_version=CHEAP))
    config = write(task_dir / "harness.yaml", ROUTES + f"scale: {{database: '{database}'}}\n")
    runs = task_dir / "runs"

    flags = ["--run-dir", str(runs), "--config", str(config), "--log-level", "warning"]

    code = main(["run", str(_task_list(task_dir, 1)), "--provider", "live", *flags])
    summary = json.loads((runs / "latest" / "summary.json").read_text())
    scopes = {n: usd(s) for n, s in _scopes(database).items()}
    days = [n for n in scopes if n.startswith("day:")]

    assert (code, len(days)) == (ExitCode.OK, 1)
    assert summary["budget"]["spent_usd"] > 0
    assert scopes[days[0]] == scopes[f"run:{summary['run_id']}"] == summary["budget"]["spent_usd"]


def test_a_refused_key_halts_every_worker_after_one_request(
    task_dir, vendors, database, temporal_address
):
    """Four tasks on two Temporal workers against a vendor that refuses the key: exactly one
    request reaches it, and the night ends halted with exit 4."""
    anthropic, gemini = vendors
    anthropic.script(anthropic_error(401, "authentication_error", "invalid key"))
    config = write(
        task_dir / "harness.yaml",
        ROUTES
        + "scale:\n  engine: temporal\n"
        + f"  temporal: {{address: '{temporal_address}', task_queue: halt, heartbeat_s: 5}}\n"
        + f"  database: '{database}'\n",
    )
    runs = task_dir / "runs"
    workers = [
        subprocess.Popen([*HARNESS, "worker", "--config", str(config), "--concurrency", "2"])
        for _ in range(2)
    ]
    try:
        flags = ["--run-dir", str(runs), "--config", str(config), "--log-level", "warning"]
        night = subprocess.run(
            [*HARNESS, "run", str(_task_list(task_dir, 4)), "--provider", "live", *flags]
        )
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            w.wait()
    summary = json.loads((runs / "latest" / "summary.json").read_text())

    assert len(anthropic.requests) + len(gemini.requests) == 1
    assert (night.returncode, summary["status"]) == (ExitCode.HALTED, "halted")
    assert sorted(t["cause"] for t in summary["tasks"]) == ["halted"] * 4
