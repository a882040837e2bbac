"""The errors a user can cause and the one table of exit codes cron sees."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["BadInput", "ExitCode"]


class BadInput(Exception):
    """Bad task list, config, policy or arguments: exit 2, nothing ran, nothing was spent."""


class ExitCode(IntEnum):
    """The process exit codes (README's table; a contract for cron and systemd)."""

    OK = 0  # every task passes all its tests
    NOT_ALL_PASSED = 1  # the run completed; some task is not fully passing
    BAD_INPUT = 2  # nothing ran, nothing was spent
    BUDGET = 3  # a budget cap stopped the run
    HALTED = 4  # refused credentials, billing or a spend limit halted the run: a person must act
    LOCKED = 75  # another run holds the run-dir lock (EX_TEMPFAIL)
    INTERRUPTED = 130  # SIGINT/SIGTERM
