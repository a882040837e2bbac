"""Shipped data, never code: defaults.yaml, prices.yaml and the default guardrails policy."""
