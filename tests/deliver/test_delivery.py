"""Git delivery: shipped outputs committed to a branch through a worktree of its own; the
user's branch, HEAD and index untouched; problems refused at start-up or warned per task."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import structlog

from harness.cli import main
from tests._night import Task, write_tasks

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def restore_logging():
    """A run configures structlog to write its events file; undo that for later tests."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository on `main` holding a task list of two tasks (their outputs ignored), with
    a change staged in the index and an untracked file: a user in the middle of their work."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")
    write_tasks(repo / "port", [Task("alpha"), Task("beta", solved=True)])
    (repo / ".gitignore").write_text("port/out/\n")  # the outputs are ignored on main
    (repo / "notes.txt").write_text("mine\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    (repo / "notes.txt").write_text("mine, edited and staged\n")
    git(repo, "add", "notes.txt")
    (repo / "scratch.txt").write_text("untracked\n")
    return repo


def user_state(repo: Path) -> tuple[str, ...]:
    """The user's branch, HEAD, index (bytes) and status."""
    index = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    return (git(repo, "symbolic-ref", "HEAD"), git(repo, "rev-parse", "HEAD"), index,
            git(repo, "status", "--porcelain", "--untracked-files=no"))  # fmt: skip


def night(repo: Path, tmp_path: Path, deliver: str, *extra: str) -> tuple[int, dict]:
    (tmp_path / "harness.yaml").write_text(f"deliver:\n  git: {deliver}\n")
    runs = tmp_path / "runs"
    argv = ["run", str(repo / "port" / "tasks.yaml"), "--provider", "sim", "--seed", "3"]
    argv += ["--run-dir", str(runs), "--config", str(tmp_path / "harness.yaml")]
    code = main([*argv, "--log-level", "error", *extra])
    summary = runs / "latest" / "summary.json"
    return code, json.loads(summary.read_text()) if summary.exists() else {}


def shipped(summary: dict) -> dict[str, str]:
    return {t["id"]: t["output"] for t in summary["tasks"] if t["output"]}


def test_one_commit_per_shipped_task_and_the_user_untouched(repo, tmp_path):
    """per: task: the branch holds a commit per shipped task with the shipped file; the
    user's branch, HEAD and index are as they were, and the worktree is gone."""
    before = user_state(repo)

    code, summary = night(repo, tmp_path, '{branch: "harness/{run_id}", per: task}')

    branch = f"harness/{summary['run_id']}"
    log = git(repo, "log", "--format=%s%n%b%x00", f"main..{branch}").split("\0")
    messages = [m.strip() for m in log if m.strip()]
    files = shipped(summary)
    assert code in (0, 1)
    assert before == user_state(repo)
    assert len(messages) == len(files) == 2
    for task_id, output in files.items():
        rel = Path(output).relative_to(repo)
        assert Path(output).read_text() == git(repo, "show", f"{branch}:{rel}") + "\n"
        message = next(m for m in messages if f"harness: {task_id} " in m)
        assert summary["run_id"] in message and "best attempt" in message and "$" in message
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_one_commit_per_night(repo, tmp_path):
    """per: night: one commit holding every shipped file, after the last task."""
    code, summary = night(repo, tmp_path, '{branch: "nightly/{run_id}", per: night}')

    branch = f"nightly/{summary['run_id']}"
    assert code in (0, 1)
    changed = git(repo, "diff", "--name-only", f"main..{branch}").splitlines()
    assert git(repo, "rev-list", "--count", f"main..{branch}") == "1"
    assert sorted(str(Path(o).relative_to(repo)) for o in shipped(summary).values()) == changed


def test_a_repository_that_goes_mid_rebase_gives_per_task_warnings(repo, tmp_path, monkeypatch):
    """A rebase begun after start-up: each task warns that it was not delivered, the night
    completes and ships its files as always, and nothing crashes."""
    from harness.runner import pool

    real = pool.run_task

    def rebase_then_run(*args, **kwargs):
        (repo / ".git" / "rebase-merge").mkdir(exist_ok=True)
        return real(*args, **kwargs)

    monkeypatch.setattr(pool, "run_task", rebase_then_run)

    code, summary = night(repo, tmp_path, "{per: task}")

    warned = [w for t in summary["tasks"] for w in t["warnings"] if "git delivery" in w]
    assert code in (0, 1)
    assert len(warned) == len(shipped(summary)) == 2
    assert all("middle of a rebase" in w for w in warned)
    assert all(Path(o).is_file() for o in shipped(summary).values())


@pytest.mark.parametrize(
    ("setup", "deliver", "expected"),
    [
        ("outside", "{per: task}", "not in a git repository"),
        ("", "{branch: main}", "'main' is checked out"),
        ("", '{branch: "bad..name"}', "not a valid branch name"),
        ("rebase", "{per: task}", "middle of a rebase"),
        ("policy", '{branch: "release/{run_id}"}', "no release branches"),
    ],
)
def test_what_start_up_can_know_is_refused_before_anything_runs(
    repo, tmp_path, capsys, setup, deliver, expected
):
    """No repository, a checked-out or invalid branch, a rebase under way, a branch the
    policy forbids: exit 2, no run, and the user's repository as it was."""
    extra: list[str] = []
    if setup == "outside":
        subprocess.run(["rm", "-rf", str(repo / ".git")], check=True)
    if setup == "rebase":
        (repo / ".git" / "rebase-merge").mkdir()
    if setup == "policy":
        policy = tmp_path / "policy.yaml"
        policy.write_text(
            "version: 1\nforbidden_commands:\n  - id: no-release\n"
            "    command: [git, worktree, add]\n    args: ['release/.*']\n"
            "    reason: no release branches from a night\n"
        )
        extra = ["--policy", str(policy)]
    before = user_state(repo) if setup != "outside" else None

    code, summary = night(repo, tmp_path, deliver, *extra)

    assert (code, summary) == (2, {})
    assert expected in capsys.readouterr().err
    assert setup == "outside" or before == user_state(repo)


def test_a_branch_template_with_another_placeholder_is_a_config_error(tmp_path):
    """Only {run_id} may be in deliver.git.branch; anything else is refused with the line."""
    from harness.config import ConfigError, load_config

    (tmp_path / "harness.yaml").write_text('deliver:\n  git: {branch: "h/{user}"}\n')

    with pytest.raises(ConfigError, match=r"harness.yaml:2: deliver.git.branch: .*\{run_id\}"):
        load_config(tmp_path / "harness.yaml")
