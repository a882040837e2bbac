"""Tests of the sandbox launch: scrubbed environment, isolation flags, what the tests can see."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.tasks.spec import TaskSpec
from harness.testrun import _launch as launch
from harness.testrun._run import TestLimits, _execute

TASK_DIR = Path(__file__).parent / "hostile" / "task"
TASK = TaskSpec(
    id="launch-calc",
    base_dir=TASK_DIR,
    reference=(),
    tests=(TASK_DIR / "acceptance" / "test_calc.py",),
    output=TASK_DIR / "out/calc.py",
)
needs_bwrap = pytest.mark.skipif(not launch.bwrap_works(), reason="bubblewrap not usable here")


def probe(code: str) -> str:
    """Run `code` as the body of calc.add inside the sandbox; return what it raised."""
    body = "".join(f"    {line}\n" for line in code.splitlines())
    source = f"import os\n\n\ndef add(a, b):\n{body}\n\ndef mul(a, b):\n    return 0\n"
    result = _execute(TASK, source, TestLimits(per_test_timeout_s=5, collect_timeout_s=15))
    return result.cases[0].message


def test_environment_is_an_allowlist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's environment holds only the allowlisted names, whatever the parent has."""
    monkeypatch.setenv("GEMINI_API_KEY", "g-secret-0123456789")
    monkeypatch.setenv("PYTHONPATH", "/evil")
    plan = launch.make_plan("rlimits", tmp_path, tmp_path / "root", 16, 8)

    assert {k for k, _ in plan.env} == {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "TZ",
        "NO_COLOR",
        "PYTHONDONTWRITEBYTECODE",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
        launch.MARKER_VAR,
    }


@needs_bwrap
def test_bwrap_plan_isolates(tmp_path: Path) -> None:
    """The bubblewrap command cuts network, pids, and dies with its parent."""
    plan = launch.make_plan("bwrap", tmp_path, tmp_path / "root", 16, 8)
    if plan.cgroup:
        launch.cgroup.destroy(plan.cgroup)

    assert {"--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"} <= set(
        plan.argv
    )
    assert "/work" not in plan.argv[plan.argv.index("--ro-bind") + 1]


@needs_bwrap
def test_bwrap_sandbox_sees_only_itself() -> None:
    """Inside bubblewrap: unprivileged uid, a handful of pids, read-only system, private /tmp."""
    message = probe(
        "pids = [p for p in os.listdir('/' + 'proc') if p.isdigit()]\n"
        "ro = os.access('/usr', os.W_OK)\n"
        "open('/tmp/x', 'w').write('ok')\n"
        "raise ValueError(f'uid={os.getuid()} pids={len(pids)} usr_writable={ro}')"
    )
    uid = launch.NOBODY if os.geteuid() == 0 else os.getuid()

    assert message.startswith(f"ValueError: uid={uid} pids=")
    assert int(message.split("pids=")[1].split()[0]) <= 4 and "usr_writable=False" in message


@needs_bwrap
def test_bwrap_scratch_is_read_only() -> None:
    """The tests and the candidate cannot be changed, nor files added next to them."""
    message = probe("open('conftest.py', 'w')")

    assert "Read-only file system" in message or "Permission denied" in message
