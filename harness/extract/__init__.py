"""Model reply → candidate code: fenced or raw, syntax-checked, placeholders and gaps rejected;
the language registry (harness/data/languages.yaml); review and judge-verdict parsing."""

from __future__ import annotations

from harness.extract.code import NO_CODE, Extraction, extract_code, required_names_from_tests
from harness.extract.edits import EditBlock, apply_edits, is_edit_refusal, parse_edits
from harness.extract.languages import (
    LANGUAGES,
    RESULT_FORMATS,
    Language,
    language_named,
    language_of_path,
)
from harness.extract.review import Review, parse_review
from harness.extract.tree import comment_free, syntax_tree, walk
from harness.extract.verdict import Verdict, VerdictReading, parse_verdict

__all__ = [
    "LANGUAGES",
    "NO_CODE",
    "RESULT_FORMATS",
    "EditBlock",
    "Extraction",
    "Language",
    "Review",
    "Verdict",
    "VerdictReading",
    "apply_edits",
    "comment_free",
    "extract_code",
    "is_edit_refusal",
    "language_named",
    "language_of_path",
    "parse_edits",
    "parse_review",
    "parse_verdict",
    "required_names_from_tests",
    "syntax_tree",
    "walk",
]
