"""Guardrails: the operator's policy, enforced by the harness, never shown to the model."""

from __future__ import annotations

from harness.guardrails.enforce import (
    GuardrailError,
    Policy,
    PolicyError,
    Violation,
    load_policy,
    shipped_refused_go_packages,
    shipped_refused_js_modules,
)

__all__ = [
    "GuardrailError",
    "Policy",
    "PolicyError",
    "Violation",
    "load_policy",
    "shipped_refused_go_packages",
    "shipped_refused_js_modules",
]
