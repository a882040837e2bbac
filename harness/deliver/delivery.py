"""Git delivery: shipped outputs committed to a branch of their own, through a worktree of
its own, so the user's checked-out branch, HEAD and index are never touched. Never pushes.

What can be known at start-up (no repository, a branch the policy forbids or that is checked
out, a repository mid-rebase, an output outside the repository) is refused then; anything
that goes wrong later is a warning on the task it concerns, never a crash.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import structlog

from harness.config import GitDeliverConfig
from harness.deliver.git import DeliveryError, Git, repo_state
from harness.fsio import write_atomic
from harness.results import TaskResult, TaskStatus, sha256
from harness.tasks import TaskSpec

__all__ = ["DeliveryError", "GitDelivery"]

log = structlog.get_logger()


class GitDelivery:
    """Commits for one night. Build with `GitDelivery.plan(...)` (raises DeliveryError)."""

    def __init__(self, git: Git, branch: str, per: str, run_id: str, worktree: Path) -> None:
        self._git, self.branch, self.per, self.run_id = git, branch, per, run_id
        self._worktree = worktree
        self._outputs: dict[str, Path] = {}  # task id → output, relative to the repository
        self._lock = threading.Lock()
        self._opened = False

    @classmethod
    def plan(
        cls,
        config: GitDeliverConfig,
        specs: Sequence[TaskSpec],
        tasks_file: Path,
        run_id: str,
        worktree: Path,
        check: Callable[[list[str]], str | None],
    ) -> GitDelivery:
        """Everything that can be checked before the night starts."""
        folder = Path(tasks_file).resolve().parent
        git = Git(folder, check)
        try:
            top = Path(git.out("rev-parse", "--show-toplevel"))
        except DeliveryError as exc:
            raise DeliveryError(f"the task list {tasks_file} is not in a git repository") from exc
        branch = config.branch.format(run_id=run_id)
        git = git.at(top)
        delivery = cls(git, branch, config.per, run_id, worktree)
        delivery._check_branch()
        delivery._check_state()
        for spec in specs:
            try:
                delivery._outputs[spec.id] = spec.output.resolve().relative_to(top)
            except ValueError:
                msg = f"task {spec.id}: its output {spec.output} is outside the repository {top}"
                raise DeliveryError(msg) from None
        git.use_identity()
        return delivery

    def _check_branch(self) -> None:
        git, branch = self._git, self.branch
        if git.run("check-ref-format", "--branch", branch, ok=(0, 1, 128)).returncode:
            raise DeliveryError(f"{branch!r} is not a valid branch name")
        for argv in self._commands():
            refused = git.refused(*argv)
            if refused:
                raise DeliveryError(f"branch {branch!r}: the guardrails policy forbids {refused}")
        where = _checked_out(git.out("worktree", "list", "--porcelain"), branch)
        if where == self._worktree:  # ours, left by an interrupted run of this night
            git.run("worktree", "remove", "--force", str(where))
        elif where is not None:
            raise DeliveryError(f"branch {branch!r} is checked out at {where}; use another")
        no_head = git.run("rev-parse", "--verify", "-q", "HEAD", ok=(0, 1)).returncode
        if no_head and not self._branch_exists():
            raise DeliveryError("the repository has no commit yet to start the branch from")

    def _commands(self) -> list[tuple[str, ...]]:
        """How the branch and its worktree are made: the branch a plain argument of each
        (never an option's value), so the policy's `args` rules see it."""
        return [
            ("branch", self.branch, "HEAD"),
            ("worktree", "add", str(self._worktree), self.branch),
        ]

    def _branch_exists(self) -> bool:
        ref = f"refs/heads/{self.branch}"
        return not self._git.run("show-ref", "--verify", "-q", ref, ok=(0, 1)).returncode

    def _check_state(self) -> None:
        doing = repo_state(self._git)
        if doing:
            raise DeliveryError(
                f"the repository is in the middle of {doing}; finish or abort it first"
            )

    # The night.

    def task_done(self, result: TaskResult) -> TaskResult:
        """Per task: commit a task's shipped output; a failure becomes a warning on it."""
        if self.per != "task" or not _shipped(result):
            return result
        return self._deliver([result])[0]

    def night_done(self, results: Sequence[TaskResult]) -> tuple[TaskResult, ...]:
        """Per night: one commit of every output shipped tonight."""
        shipped = [r for r in results if _shipped(r)]
        if self.per != "night" or not shipped:
            return tuple(results)
        done = {r.id: r for r in self._deliver(shipped)}
        return tuple(done.get(r.id, r) for r in results)

    def _deliver(self, results: list[TaskResult]) -> list[TaskResult]:
        with self._lock:
            try:
                commit = self._commit(results)
            except Exception as exc:  # delivery's own boundary: a warning, never a crash
                log.warning("delivery_failed", branch=self.branch,
                            tasks=[r.id for r in results], error=str(exc))  # fmt: skip
                note = f"git delivery to {self.branch} failed: {exc}"
                return [replace(r, warnings=(*r.warnings, note)) for r in results]
        log.info("delivered", branch=self.branch, commit=commit, tasks=[r.id for r in results])
        return results

    def _commit(self, results: list[TaskResult]) -> str | None:
        self._check_state()
        wt = self._open()
        for result in results:
            code = Path(result.output or "").read_text(encoding="utf-8")
            if sha256(code) != result.output_sha256:
                raise DeliveryError(f"{result.output} changed since it was shipped")
            write_atomic(wt.cwd / self._outputs[result.id], code)
        paths = [str(self._outputs[r.id]) for r in results]
        wt.run("add", "--force", "--", *paths)  # an output folder the repository ignores
        if not wt.run("diff", "--cached", "--quiet", ok=(0, 1)).returncode:
            return None  # the branch already holds exactly these files
        wt.run("commit", "-q", "-m", self._message(results), "--", *paths)
        return wt.out("rev-parse", "HEAD")

    def _open(self) -> Git:
        """The delivery worktree, added on first use (the branch made from HEAD if new)."""
        wt = self._git.at(self._worktree)
        if not self._opened:
            self._git.run("worktree", "prune")
            make_branch, add_worktree = self._commands()
            if not self._branch_exists():
                self._git.run(*make_branch)
            self._git.run(*add_worktree)
            self._opened = True
        return wt

    def _message(self, results: list[TaskResult]) -> str:
        lines = [_line(r) for r in results]
        if self.per == "task":
            (r,) = results
            subject = f"harness: {r.id} {r.passed}/{r.total} tests pass (run {self.run_id})"
        else:
            subject = f"harness: {len(results)} task(s) from run {self.run_id}"
        return "\n".join([subject, "", *lines, "", f"run: {self.run_id}"]) + "\n"

    def close(self) -> None:
        """Remove the delivery worktree; the branch and its commits stay."""
        with self._lock:
            if not self._opened:
                return
            try:
                self._git.run("worktree", "remove", str(self._worktree))
            except DeliveryError as exc:  # left half-written by a failed delivery
                log.warning("delivery_worktree_removed", path=str(self._worktree), error=str(exc))
                shutil.rmtree(self._worktree, ignore_errors=True)
                self._git.run("worktree", "prune", ok=(0, 1, 128))
            self._opened = False


def _checked_out(porcelain: str, branch: str) -> Path | None:
    """Where `branch` is checked out, from `git worktree list --porcelain`."""
    for entry in porcelain.split("\n\n"):
        lines = entry.splitlines()
        if f"branch refs/heads/{branch}" in lines:
            return Path(lines[0].removeprefix("worktree "))
    return None


def _shipped(result: TaskResult) -> bool:
    """Shipped tonight: a file was written (an up-to-date skip wrote nothing)."""
    return result.output is not None and result.status is not TaskStatus.SKIPPED


def _line(r: TaskResult) -> str:
    return (
        f"{r.id}: {r.status.value}, {r.passed}/{r.total} tests pass, "
        f"best attempt {r.best_attempt}, cost ${r.cost_usd:.6f}"
    )
