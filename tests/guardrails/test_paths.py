"""Guardrails on writes: resolved paths must stay under a write root, outside protected paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.guardrails import Policy, load_policy


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    """A task list folder beside a folder the harness must never write."""
    (tmp_path / "tasks" / "out").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    return tmp_path / "tasks"


@pytest.fixture
def policy(tasks: Path) -> Policy:
    return load_policy(None, task_list_dir=tasks)


def _rule(policy: Policy, path: Path | str) -> str | None:
    violation = policy.check_write(Path(path))
    return violation.rule if violation else None


def test_output_under_the_task_list_folder_is_allowed(policy: Policy, tasks: Path) -> None:
    """The default policy allows writes anywhere under the task list's folder."""
    assert _rule(policy, tasks / "out" / "orders_service.py") is None
    assert _rule(policy, tasks / "new" / "deep" / "file.py") is None


def test_relative_paths_resolve_against_the_task_list_folder(policy: Policy) -> None:
    """A relative path means relative to the task list, not to the process's cwd."""
    assert _rule(policy, "out/orders_service.py") is None


def test_dot_dot_escape_is_refused(policy: Policy, tasks: Path) -> None:
    """`..` that climbs out of the root is caught after resolution."""
    assert _rule(policy, tasks / "out" / ".." / ".." / "elsewhere" / "x.py") == (
        "write-outside-roots"
    )
    assert _rule(policy, "../elsewhere/x.py") == "write-outside-roots"


def test_dot_dot_that_stays_inside_is_allowed(policy: Policy, tasks: Path) -> None:
    """`..` is not itself forbidden: only where the path ends up matters."""
    assert _rule(policy, tasks / "out" / ".." / "out" / "x.py") is None


def test_absolute_path_outside_is_refused(policy: Policy) -> None:
    """An absolute path outside every root is refused."""
    assert _rule(policy, "/etc/cron.d/harness") == "write-outside-roots"


def test_sibling_folder_sharing_a_prefix_is_outside(policy: Policy, tasks: Path) -> None:
    """`tasks-evil/` is not under `tasks/`: roots compare path components, not strings."""
    (tasks.parent / "tasks-evil").mkdir()

    assert _rule(policy, tasks.parent / "tasks-evil" / "x.py") == "write-outside-roots"


def test_symlinked_folder_escape_is_refused(policy: Policy, tasks: Path) -> None:
    """A folder symlink inside the root that points outside does not widen the root."""
    os.symlink(tasks.parent / "elsewhere", tasks / "out" / "link")

    assert _rule(policy, tasks / "out" / "link" / "x.py") == "write-outside-roots"


def test_symlinked_file_escape_is_refused(policy: Policy, tasks: Path) -> None:
    """An output that is a symlink to a file outside the root is refused."""
    target = tasks.parent / "elsewhere" / "victim.py"
    target.write_text("precious\n")
    os.symlink(target, tasks / "out" / "orders_service.py")

    assert _rule(policy, tasks / "out" / "orders_service.py") == "write-outside-roots"


def test_symlink_that_appears_after_validation_is_caught_at_write_time(
    policy: Policy, tasks: Path
) -> None:
    """The same path is allowed at validation and refused once a symlink replaces its folder."""
    output = tasks / "gen" / "orders_service.py"
    at_validation = _rule(policy, output)
    os.symlink(tasks.parent / "elsewhere", tasks / "gen")

    assert (at_validation, _rule(policy, output)) == (None, "write-outside-roots")


def test_symlink_pointing_inside_the_root_is_allowed(policy: Policy, tasks: Path) -> None:
    """A symlink that stays under the root is fine."""
    os.symlink(tasks / "out", tasks / "alias")

    assert _rule(policy, tasks / "alias" / "x.py") is None


def test_a_symlinked_root_is_resolved_too(tmp_path: Path) -> None:
    """A root that is itself a symlink allows writes to where it really points."""
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "tasks")
    policy = load_policy(None, task_list_dir=tmp_path / "tasks")

    assert _rule(policy, tmp_path / "real" / "x.py") is None
    assert _rule(policy, tmp_path / "tasks" / "x.py") is None


def test_git_internals_are_protected_even_under_a_root(policy: Policy, tasks: Path) -> None:
    """Writing into .git (hooks run code) is refused though .git is under the root."""
    assert _rule(policy, tasks / ".git" / "hooks" / "pre-commit") == "protected-path"
    assert _rule(policy, tasks / "vendor" / ".git" / "config") == "protected-path"
    assert _rule(policy, tasks / ".GIT" / "config") == "protected-path"
    assert _rule(policy, tasks / ".gitignore") is None


def test_extra_roots_for_the_run_directory(tasks: Path) -> None:
    """The runner adds the run directory as a root, at load time or afterwards."""
    run_dir = tasks.parent / "runs" / "r1"
    loaded = load_policy(None, task_list_dir=tasks, extra_write_roots=[run_dir])
    added = load_policy(None, task_list_dir=tasks).with_write_roots(run_dir)

    assert _rule(loaded, run_dir / "attempts" / "orders" / "1.py") is None
    assert _rule(added, run_dir / "summary.json") is None
    assert _rule(added, tasks.parent / "runs" / "r2" / "x") == "write-outside-roots"


def test_operator_roots_are_relative_to_the_task_list(tasks: Path) -> None:
    """An operator's `write_roots: [out]` narrows writes to the task list's out/ folder."""
    path = tasks.parent / "policy.yaml"
    path.write_text(f"write_roots: [out, {tasks.parent / 'elsewhere'}]\n")
    policy = load_policy(path, task_list_dir=tasks)

    assert _rule(policy, tasks / "out" / "x.py") is None
    assert _rule(policy, tasks.parent / "elsewhere" / "x.py") is None
    assert _rule(policy, tasks / "legacy" / "x.py") == "write-outside-roots"


def test_violation_shows_the_resolved_path_and_what_to_change(policy: Policy, tasks: Path) -> None:
    """The message names the path, where it really leads, the roots and the fix."""
    os.symlink(tasks.parent / "elsewhere", tasks / "out" / "link")
    violation = policy.check_write(tasks / "out" / "link" / "x.py")

    assert violation is not None
    assert str(tasks.parent / "elsewhere" / "x.py") in violation.detail
    assert "add a root to write_roots in the guardrails policy" in violation.detail
