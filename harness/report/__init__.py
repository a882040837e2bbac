"""The morning summary: summary.json (schema 1, the contract), summary.md for a terminal,
summary.html for a browser, and Prometheus textfile metrics."""

from __future__ import annotations

from harness.report.md import (
    RunSummary,
    SummaryError,
    load_summary,
    render_markdown,
    write_summary,
)
from harness.report.metrics import render_metrics, write_metrics
from harness.report.page import render_html
from harness.report.schema import SCHEMA

__all__ = [
    "SCHEMA",
    "RunSummary",
    "SummaryError",
    "load_summary",
    "render_html",
    "render_markdown",
    "render_metrics",
    "write_metrics",
    "write_summary",
]
