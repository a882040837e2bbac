"""Overnight batch porting harness with test-driven termination."""

__version__ = "0.1.0"
