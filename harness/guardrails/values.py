"""The guardrails' values and errors, shared by the public module and its private parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Found", "GuardrailError", "PolicyError", "Violation"]


@dataclass(frozen=True)
class Violation:
    """One broken rule: its id from the policy, and what was seen where."""

    rule: str
    detail: str

    def __str__(self) -> str:
        return f"guardrail {self.rule}: {self.detail}"


class GuardrailError(Exception):
    """Raised to stop a task at once with status `guardrail`; carries the violation."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(str(violation))
        self.violation = violation


class PolicyError(ValueError):
    """The guardrails policy file is invalid; the message names file, line, field and fix."""


@dataclass(frozen=True)
class Found:
    """Something a command line runs: a program's argv, shell text, or Python code.

    `run` is an argv still to be looked through (`effective` again), with its stdin; the
    caller's queue does that, so no nesting depth can exhaust the stack.
    """

    kind: Literal["argv", "run", "script", "code"]
    value: str | tuple[str, ...]
    stdin: tuple[str, ...] = ()
