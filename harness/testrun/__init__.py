"""Run a candidate's acceptance tests in a sandbox whose results candidate code cannot fake."""

from __future__ import annotations

from harness.testrun.collectable import Uncollectable, collection_problems, problems_text
from harness.testrun.differential import DifferentialSettings
from harness.testrun.isolation import Difference, isolation_differences
from harness.testrun.run import (
    SandboxError,
    TestLimits,
    expect_tests,
    precheck,
    probe_sandbox,
    run_tests,
    sandbox_kind,
)

__all__ = [
    "Difference",
    "DifferentialSettings",
    "SandboxError",
    "TestLimits",
    "Uncollectable",
    "collection_problems",
    "expect_tests",
    "isolation_differences",
    "precheck",
    "probe_sandbox",
    "problems_text",
    "run_tests",
    "sandbox_kind",
]
