"""What a task needs from its run (TaskEnv) and what it already has (Prior)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.calls import Caller
from harness.config import LoopConfig
from harness.prompts import PromptSet
from harness.results import AttemptRecord
from harness.router import Router
from harness.rundir import TaskFiles
from harness.taskspec import TaskSpec
from harness.testresult import TestResult
from harness.tracker import Best

__all__ = ["GuardrailStop", "Prior", "TaskEnv"]


class GuardrailStop(Exception):
    """A candidate or a write broke the operator's policy: the task stops at once."""


@dataclass(frozen=True)
class TaskEnv:
    """Everything a task needs from the run, decided once at start-up."""

    caller: Caller
    router: Router
    prompts: dict[str, PromptSet]
    run_tests: Callable[[TaskSpec, str], TestResult]
    workdir: Callable[[TaskSpec], TaskFiles]
    loop: LoopConfig
    check_code: Callable[[str], list[str]] = lambda code: []
    check_write: Callable[[Path], str | None] = lambda path: None
    scar_tissue: Callable[[str], list[str]] = lambda code: []
    record_attempt: Callable[[str, AttemptRecord, str | None, TestResult | None], None] = (
        lambda task_id, record, code, result: None
    )


@dataclass(frozen=True)
class Prior:
    """What a task already has before this process touches it.

    `attempts` are this run's finished attempts (a resume: they are not redone); `seed` is
    the best candidate of an earlier night, re-tested now and used as attempt 0 so the
    ratchet holds across nights; `spent` is what this run already paid for the task.
    """

    attempts: tuple[Any, ...] = ()  # harness.store.StoredAttempt
    seed: Best | None = None
    spent: Decimal = Decimal(0)
