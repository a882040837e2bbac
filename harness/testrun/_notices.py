"""What a degraded sandbox warns about, on every result it produces."""

from __future__ import annotations

from harness.testrun import _privilege as privilege
from harness.testrun._launch import fallback_caps_processes

__all__ = ["DEGRADED_WARNING", "UNCAPPED_WARNING", "UNSAFE_WARNING", "sandbox_warnings"]

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
