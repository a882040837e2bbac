"""Shared fixtures: small task lists written on the fly."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.tasks.spec import TaskSpec


@pytest.fixture(autouse=True)
def _private_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep the per-user day ledger of every test out of the real home directory."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """A folder with one legacy file, one test file and a solution, but no task list yet."""
    write(tmp_path / "legacy" / "calc.py", "def add(a, b):\n    return (200, a + b)\n")
    write(
        tmp_path / "acceptance" / "test_calc.py",
        """
        from calc_service import add, sub

        def test_add():
            assert add(2, 3) == 5

        def test_add_negative():
            assert add(-2, -3) == -5

        def test_sub():
            assert sub(5, 3) == 2

        def test_sub_zero():
            assert sub(0, 0) == 0
        """,
    )
    write(
        tmp_path / "solutions" / "calc_service.py",
        """
        def add(a, b):
            return a + b


        def sub(a, b):
            if a < b:
                return -(b - a)
            return a - b
        """,
    )
    return tmp_path


@pytest.fixture
def spec(task_dir: Path) -> TaskSpec:
    """The calc task in `task_dir` as a validated TaskSpec (five attempts, one instruction)."""
    return TaskSpec(
        id="calc",
        base_dir=task_dir,
        reference=(task_dir / "legacy/calc.py",),
        tests=(task_dir / "acceptance/test_calc.py",),
        output=task_dir / "out/calc_service.py",
        instructions="Keep the public names.",
        max_attempts=5,
    )
