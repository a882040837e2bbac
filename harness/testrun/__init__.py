"""Run a candidate's acceptance tests in a sandbox whose results candidate code cannot fake."""

from __future__ import annotations

from harness.testrun.differential import DifferentialSettings
from harness.testrun.isolation import Difference, isolation_differences
from harness.testrun.run import (
    SandboxError,
    TestLimits,
    expect_tests,
    precheck,
    run_tests,
    sandbox_kind,
)

__all__ = [
    "Difference",
    "DifferentialSettings",
    "SandboxError",
    "TestLimits",
    "expect_tests",
    "isolation_differences",
    "precheck",
    "run_tests",
    "sandbox_kind",
]
