"""TestLimits: the resource limits of one test run, checked when made."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = ["TestLimits"]


@dataclass(frozen=True)
class TestLimits:
    """Resource limits of one test run. Times in seconds, sizes in MiB."""

    __test__ = False

    timeout_s: float = 120.0  # wall clock for the whole run, relaunches included
    per_test_timeout_s: float = 30.0
    collect_timeout_s: float = 60.0  # start-up and collection, the candidate's import included
    memory_mb: int = 2048  # address space per process
    cpu_s: int = 120  # CPU time per process
    max_procs: int = 64  # processes beyond those the sandbox user already has
    file_size_mb: int = 64
    tmp_mb: int = 256  # the sandbox's private /tmp (bubblewrap only)
    sandbox: Literal["auto", "bwrap", "none"] = "auto"

    def __post_init__(self) -> None:
        if self.sandbox not in ("auto", "bwrap", "none"):
            raise ValueError(f"sandbox must be auto, bwrap or none, not {self.sandbox!r}")
        numbers = (
            self.timeout_s,
            self.per_test_timeout_s,
            self.collect_timeout_s,
            self.memory_mb,
            self.cpu_s,
            self.max_procs,
            self.file_size_mb,
            self.tmp_mb,
        )
        if not all(isinstance(n, int | float) and math.isfinite(n) and n > 0 for n in numbers):
            raise ValueError(
                "every test limit must be a finite, positive number "
                f"(timeouts {self.timeout_s}, {self.per_test_timeout_s}, {self.collect_timeout_s})"
            )
