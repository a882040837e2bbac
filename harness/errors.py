"""The errors a user can cause and the one table of exit codes cron sees."""

from __future__ import annotations

import re
from enum import IntEnum

__all__ = ["BadInput", "ExitCode", "printable"]

# What a terminal would act on rather than show: C0/C1 controls but newline and tab (ESC
# starts a screen command, CR rewrites the line) and the bidirectional overrides.
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` safe for a terminal: every control character escaped as Python writes it
    (`\\x1b`), newlines and tabs kept. Every message the CLI prints passes here."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text)


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
