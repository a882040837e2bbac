"""Shipped data files (defaults, prices, policy: YAML), never code; read through
importlib.resources.files("harness.data"), never imported."""

__all__: list[str] = []
