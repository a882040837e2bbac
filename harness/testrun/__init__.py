"""Run a candidate's acceptance tests in a sandbox whose results candidate code cannot fake."""

from __future__ import annotations

from harness.testrun.run import (
    SandboxError,
    TestLimits,
    expect_tests,
    precheck,
    run_tests,
    sandbox_kind,
)

__all__ = ["SandboxError", "TestLimits", "expect_tests", "precheck", "run_tests", "sandbox_kind"]
