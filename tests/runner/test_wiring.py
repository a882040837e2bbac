"""runner.wiring: the night's test runner takes each task's node-module list from the
operator's policy, so an allowance reaches the sandbox for that task and no other."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from harness.config import load_config
from harness.guardrails import load_policy
from harness.runner.wiring import _sandbox
from tests._foreign import candidate, js_task, needs_node


@needs_node
def test_a_policy_allowance_reaches_the_sandbox_for_its_task_only(tmp_path: Path) -> None:
    """With `allowed_js_modules: {calc_js: [fs]}`, a candidate loading fs runs for calc_js
    (every test passes) and is refused before running for any other task id."""
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("allowed_js_modules:\n  calc_js: [fs]\n")
    policy = load_policy(policy_file, task_list_dir=tmp_path)
    sandbox = _sandbox(SimpleNamespace(config=load_config(), policy=policy))  # type: ignore[arg-type]
    code = 'const fs = require("node:fs");\n' + candidate("js", "good")

    allowed = sandbox.run(js_task(), code)
    other = sandbox.run(js_task(id="other_js"), code)

    assert (allowed.rejected, allowed.passed, allowed.total) == (False, 3, 3)
    assert other.rejected and "may not load the module 'node:fs'" in (other.error or "")
