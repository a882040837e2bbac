"""What a test run tells the operator: a degraded sandbox's warnings on every result, and the
one `tests_ran` line every runner (pytest's or a task's own command) logs."""

from __future__ import annotations

from typing import Any

import structlog

from harness.results import TestResult
from harness.testrun import privilege
from harness.testrun.launch import fallback_caps_processes

__all__ = [
    "DEGRADED_WARNING",
    "UNCAPPED_WARNING",
    "UNSAFE_WARNING",
    "log_tests_ran",
    "sandbox_warnings",
]

log = structlog.get_logger("harness.testrun")

DEGRADED_WARNING = (
    "bubblewrap is not available: tests ran with rlimits, a process group and a scrubbed "
    "environment only (no network or filesystem isolation); install bubblewrap"
)
UNCAPPED_WARNING = (
    "no process limit: running as root without bubblewrap, a writable pids cgroup or a "
    "throwaway uid to run the tests as; a fork bomb is stopped only by the timeouts"
)
UNSAFE_WARNING = (
    f"UNSAFE ({privilege.UNSAFE_VAR}=1): candidate code runs as the harness's own user without "
    "bubblewrap; it can read the API keys, write the budget ledger and the run directory, and "
    "signal the harness's processes"
)


def sandbox_warnings(kind: str) -> tuple[str, ...]:
    """The warnings a result of this sandbox kind carries."""
    if kind != "rlimits":
        return ()
    warnings = (DEGRADED_WARNING,)
    warnings += () if privilege.can_drop() else (UNSAFE_WARNING,)
    return warnings + (() if fallback_caps_processes() else (UNCAPPED_WARNING,))


def log_tests_ran(task_id: str, kind: str, result: TestResult, **extra: Any) -> None:
    """The canonical line for one test run; `extra` is what one runner adds (its format)."""
    log.info(
        "tests_ran",
        task_id=task_id,
        sandbox=kind,
        **extra,
        passed=result.passed,
        failed=result.failed,
        errors=result.errors,
        total=result.total,
        skipped=result.skipped,
        tampered=result.tampered,
        timed_out=result.timed_out,
        duration_s=round(result.duration_s, 3),
    )
