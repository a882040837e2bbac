"""Model reply → candidate code: fenced or raw, ast-checked, placeholders and gaps rejected."""

from __future__ import annotations

from harness.extract._code import NO_CODE, Extraction, extract_code, required_names_from_tests
from harness.extract._review import Review, parse_review

__all__ = [
    "NO_CODE",
    "Extraction",
    "Review",
    "extract_code",
    "parse_review",
    "required_names_from_tests",
]
