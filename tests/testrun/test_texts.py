"""What a test run's words may carry into a fix prompt: never a secret of the harness."""

from __future__ import annotations

from harness.keys import declare
from harness.testrun.texts import secret_values


def test_a_declared_key_variable_is_redacted_from_test_output(monkeypatch):
    """A key read from a variable named like no secret (an endpoint's api_key_env) is among
    the values redacted from what a test run reports."""
    monkeypatch.setenv("LOCAL_LLM_BEARER", "bearer-value-0123456789")
    declare("LOCAL_LLM_BEARER")

    assert "bearer-value-0123456789" in secret_values()
