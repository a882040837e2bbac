"""Git, run for delivery: every command checked against the guardrails' command policy,
with the user's hooks off and no GIT_* variable of the harness's own environment."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

__all__ = ["DeliveryError", "Git", "repo_state"]

# Kept from the environment: who the commits are by, if the operator set it that way.
_IDENTITY = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
_FALLBACK = {"name": "harness", "email": "harness@localhost"}
# Operations that leave a repository half-way; delivering on top of one is refused.
_IN_PROGRESS = {
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase or git am",
    "MERGE_HEAD": "a merge",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
}


class DeliveryError(Exception):
    """Delivery cannot go on; the message says why and what to change."""


class Git:
    """`git -C <cwd> ...` with hooks off; `check` is the policy (a reason, or None)."""

    def __init__(self, cwd: Path, check: Callable[[list[str]], str | None]) -> None:
        self.cwd = Path(cwd)
        self._check = check
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _IDENTITY}
        self._env = env | {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}

    def at(self, cwd: Path) -> Git:
        other = Git(cwd, self._check)
        other._env = self._env
        return other

    def _argv(self, args: tuple[str, ...]) -> list[str]:
        return ["git", "-C", str(self.cwd), "-c", "core.hooksPath=/dev/null", *args]

    def refused(self, *args: str) -> str | None:
        """Why the policy would refuse `git args`, or None."""
        return self._check(self._argv(args))

    def run(self, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        """Run one git command; DeliveryError when the policy forbids it or it fails."""
        argv = self._argv(args)
        refused = self._check(argv)
        if refused:
            raise DeliveryError(f"the guardrails policy forbids it: {refused}")
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=self._env, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DeliveryError(f"`git {args[0]}` could not run: {exc}") from exc
        if done.returncode not in ok:
            said = (done.stderr or done.stdout).strip().splitlines()
            said = [line for line in said if not line.startswith("hint:")] or said or [""]
            raise DeliveryError(f"`git {' '.join(args[:2])}` failed: {said[0]}")
        return done

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.strip()

    def use_identity(self) -> None:
        """Commit as the repository's configured user, else as `harness`."""
        env = dict(self._env)
        for part, fallback in _FALLBACK.items():
            configured = self.run("config", f"user.{part}", ok=(0, 1)).stdout.strip()
            for who in ("AUTHOR", "COMMITTER"):
                env.setdefault(f"GIT_{who}_{part.upper()}", configured or fallback)
        self._env = env


def repo_state(git: Git) -> str | None:
    """What the repository is in the middle of (its main worktree's state), or None."""
    common = Path(git.out("rev-parse", "--path-format=absolute", "--git-common-dir"))
    for name, what in _IN_PROGRESS.items():
        if (common / name).exists():
            return what
    return None
