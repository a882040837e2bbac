"""Batch mode end to end with the real SDKs: `harness run --provider live` against the fake
Anthropic and Gemini servers' batch and interactive endpoints."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
import structlog

from harness.cli import main
from harness.llm import ServiceTier, Usage
from harness.pricing import cost
from tests._night import count, kill_tree, latest_run_id, wait_for
from tests.conftest import fixture_prices, write
from tests.fakebatch import BatchScript, EntryScript
from tests.fakeserver import FakeLLMServer, anthropic_sse, fake_vendors, gemini_reply

pytestmark = pytest.mark.slow

MID, CHEAP = "claude-sonnet-5-5", "gemini-3.8-flash"
SOLUTION = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
WRITE_REPLY = f"Here is the port.\n\n```python\n{SOLUTION}```\n"
BILL = (1200, 3000, 0, 400)
IDS = [f"t{i}" for i in range(6)]


def _config(deadline: str) -> str:
    return f"""
routes:
  cheap: {{provider: gemini, model: {CHEAP}, max_tokens: 16384}}
  mid: {{provider: anthropic, model: {MID}, max_tokens: 32000}}
  frontier: {{provider: anthropic, model: claude-opus-5-5, max_tokens: 64000}}
provider_timeout_s: 30
batch: {{enabled: true, steps: [write], deadline: "{deadline}", poll_s: 0.05, max_poll_s: 0.2}}
"""


@pytest.fixture(autouse=True)
def restore_logging():
    """A run configures structlog to write its events file; undo that for later tests."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch):
    """A fake Anthropic and a fake Gemini, reached only through the SDKs' base-URL variables."""
    with fake_vendors(
        monkeypatch,
        "sk-ant-api03-BATCHFAKEKEYBATCHFAKEKEY",
        "AIzaSyBATCHFAKEFAKEFAKEFAKEFAKEFAKE00",
    ) as both:
        yield both


def _tasks(task_dir: Path, deadline: str) -> Path:
    """Six tasks over conftest's calc folder, each shipping to its own folder."""
    write(task_dir / "harness.yaml", _config(deadline))
    rows = "".join(
        f"  - id: {i}\n    reference: legacy/calc.py\n    tests: acceptance/test_calc.py\n"
        f"    output: out/{i}/calc_service.py\n"
        for i in IDS
    )
    path = task_dir / "tasks.yaml"
    path.write_text("tasks:\n" + rows)
    return path


def _run(tasks: Path) -> tuple[int, dict, list[dict]]:
    runs = tasks.parent / "runs"
    argv = ["run", str(tasks), "--provider", "live", "--run-dir", str(runs)]
    code = main([*argv, "--config", str(tasks.parent / "harness.yaml"), "--budget-usd", "5"])
    root = (runs / "latest").resolve()
    events = [json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()]
    return code, json.loads((root / "summary.json").read_text()), events


def _interactive_anthropic(server: FakeLLMServer) -> int:
    return sum(1 for r in server.requests if r.path.rstrip("/").endswith("/v1/messages"))


def test_a_six_task_batch_night_writes_at_half_price(servers, task_dir) -> None:
    """One batch create for the one write model, no interactive write, each write settled at
    half the interactive price, reviews interactive, every task passing, the saving shown."""
    anthropic, gemini = servers
    anthropic.batches.script(BatchScript(polls=2, default=EntryScript(text=WRITE_REPLY, bill=BILL)))
    gemini.script(*[gemini_reply("CLEAN", model_version=CHEAP) for _ in IDS])

    code, summary, events = _run(_tasks(task_dir, "10m"))

    price = fixture_prices().get(MID)
    full, half = cost(Usage(*BILL), price), cost(Usage(*BILL), price.at(ServiceTier.BATCH))
    assert (code, anthropic.batches.creates["anthropic"]) == (0, 1)
    assert _interactive_anthropic(anthropic) == 0
    bought = [e for e in events if e["event"] == "call_finished"]
    assert [e["step"] for e in bought if e["service_tier"] != "batch"] == ["review"] * 6
    db = sqlite3.connect(task_dir / "runs" / "harness.db")
    writes = db.execute("SELECT cost_usd FROM calls WHERE step='write'").fetchall()
    assert sorted(Decimal(c) for (c,) in writes) == [half] * 6 and half * 2 == full
    assert [t["status"] for t in summary["tasks"]] == ["passed"] * 6
    assert all(t["batch"]["by_batch"] for t in summary["tasks"])
    assert Decimal(summary["batch"]["saved_usd_exact"]) == 6 * (full - half)


def test_a_never_ending_batch_is_cancelled_and_the_night_finishes_interactively(
    servers, task_dir
) -> None:
    """At the deadline the batch is cancelled; every write is bought interactively at the
    full price once the vendor says the batch ended; spend stays under the cap."""
    anthropic, gemini = servers
    anthropic.batches.script(BatchScript(polls=None))
    write_sse = anthropic_sse(
        WRITE_REPLY, model=MID, input_tokens=1200, cache_write=3000, output_tokens=400
    )
    anthropic.script(*[write_sse for _ in IDS])
    gemini.script(*[gemini_reply("CLEAN", model_version=CHEAP) for _ in IDS])

    code, summary, events = _run(_tasks(task_dir, "2s"))

    assert (code, anthropic.batches.creates["anthropic"]) == (0, 1)
    assert sum(e["event"] == "batch_deadline_cancel" for e in events) == 1
    assert _interactive_anthropic(anthropic) == 6
    assert (summary["batch"]["canceled"], summary["batch"]["succeeded"]) == (6, 0)
    assert summary["budget"]["spent_usd"] <= 5


def test_kill_9_after_the_batch_is_created_then_resume_creates_no_second_batch(
    servers, task_dir
) -> None:
    """A real process killed once its batch is recorded; `--resume` re-attaches to it through
    the real SDK, uses its results and sends no interactive write and no second create."""
    anthropic, gemini = servers
    anthropic.batches.script(BatchScript(polls=None, default=EntryScript(text=WRITE_REPLY)))
    gemini.script(*[gemini_reply("CLEAN", model_version=CHEAP) for _ in IDS])
    tasks = _tasks(task_dir, "10m")
    runs = tasks.parent / "runs"
    argv = [sys.executable, "-m", "harness", "run", str(tasks), "--provider", "live",
            "--run-dir", str(runs), "--config", str(tasks.parent / "harness.yaml")]  # fmt: skip
    with open(task_dir / "first.log", "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: count(runs / (latest_run_id(runs) or "x"), "batch_submitted"), 120, proc)
        assert proc.poll() is None
        proc.kill()
        proc.wait()
    finally:
        kill_tree(proc)
    for batch in anthropic.batches.batches.values():
        batch.script.polls = batch.polls + 1  # the vendor finishes it meanwhile

    code = main([*[str(a) for a in argv[3:]], "--resume"])

    root = (runs / "latest").resolve()
    summary = json.loads((root / "summary.json").read_text())
    assert (code, anthropic.batches.creates["anthropic"]) == (0, 1)
    assert _interactive_anthropic(anthropic) == 0
    assert count(root, "batch_reattached") == 6
    assert all(t["batch"]["by_batch"] for t in summary["tasks"])
