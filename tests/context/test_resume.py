"""A resumed task serves each recorded round's tool results from the run store."""

from __future__ import annotations

import json
from pathlib import Path

from harness.context import Confinement, Limits, ToolBox
from harness.llm import ToolCall
from harness.store import Store

LIMITS = Limits(
    rounds=3, calls_per_round=5, result_bytes=16384, step_bytes=65536, task_bytes=131072
)


def test_a_resume_serves_recorded_results_and_reads_nothing(tmp_path: Path):
    """Results recorded before the kill come back from the store after it, file deleted."""
    base = tmp_path / "tasks"
    (base / "lib").mkdir(parents=True)
    (base / "lib" / "helper.py").write_text("def helper(): ...\n")
    calls = (ToolCall("toolu_1", "read_file", json.dumps({"path": "lib/helper.py"})),)
    confinement = Confinement.of(base, (), ())
    store = Store.open(tmp_path / "runs" / "harness.sqlite")
    log = store.tool_log("run-1", tmp_path / "runs" / "run-1")
    first = ToolBox(confinement, LIMITS, "calc", log).run(calls, 2, "fix")
    (base / "lib" / "helper.py").unlink()

    again = ToolBox(confinement, LIMITS, "calc", log).run(calls, 2, "fix")

    assert (again, first[0].is_error) == (first, False)
    assert (tmp_path / "runs" / "run-1" / "calls" / "calc" / "2-fix.tools.json").is_file()
