"""What a task needs from its run (TaskEnv) and what it already has (Prior)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.calls import Caller
from harness.config import LoopConfig
from harness.context import ToolBox
from harness.prompts import PromptSet
from harness.results import AttemptRecord, TaskResult, TestResult
from harness.router import Router
from harness.store import StoredAttempt, TaskFiles
from harness.tasks import TaskSpec
from harness.tracker import Best

__all__ = ["GuardrailStop", "Prior", "TaskEnv", "TaskFault"]


class GuardrailStop(Exception):
    """A candidate or a write broke the operator's policy: the task stops at once."""


class TaskFault(Exception):
    """A fault ended a task after its best candidate was shipped; carries that result.

    The cause (`__cause__`) is what went wrong; the runner classifies it.
    """

    def __init__(self, result: TaskResult) -> None:
        super().__init__(result.reason)
        self.result = result


@dataclass(frozen=True)
class TaskEnv:
    """Everything a task needs from the run, decided once at start-up."""

    caller: Caller
    router: Router
    prompts: dict[str, PromptSet]
    run_tests: Callable[[TaskSpec, str], TestResult]
    workdir: Callable[[TaskSpec], TaskFiles]
    loop: LoopConfig
    # Collects the task's expected test ids (once per distinct tests); run beside the first
    # model call so the first test run does not wait for it.
    expect_tests: Callable[[TaskSpec], None] = lambda spec: None
    check_code: Callable[[str, str], list[str]] = lambda code, language: []  # (code, language)
    check_write: Callable[[Path], str | None] = lambda path: None
    scar_tissue: Callable[[str, str], list[str]] = lambda code, language: []  # (code, language)
    record_attempt: Callable[[str, AttemptRecord, str | None, TestResult | None], None] = (
        lambda task_id, record, code, result: None
    )
    # A task's context tools (`loop.context_tools`), or None when they are off.
    toolbox: Callable[[TaskSpec], ToolBox | None] = lambda spec: None


@dataclass(frozen=True)
class Prior:
    """What a task already has before this process touches it.

    `attempts` are this run's finished attempts (a resume: they are not redone); `seed` is
    the best earlier candidate (an earlier night's, or the file already at the output path),
    re-tested now and used as attempt 0 so the ratchet holds across nights. What the task
    already cost this run is in the budget, which a resume starts from the run store.
    """

    attempts: tuple[StoredAttempt, ...] = ()
    seed: Best | None = None
