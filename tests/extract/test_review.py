"""Parsing the cheap model's review."""

from __future__ import annotations

import pytest

from harness.extract import Review, parse_review


@pytest.mark.parametrize("text", ["CLEAN", " clean\n", "**CLEAN**", "`CLEAN`", "Clean."])
def test_clean_in_its_usual_spellings(text: str) -> None:
    """CLEAN, however the model decorates it, is a clean review."""
    assert parse_review(text) == Review()


def test_bullets_become_violations() -> None:
    """Each bullet or numbered line is one violation, without its marker."""
    text = (
        "- rule 4: print() in create_order\n* rule 5: raises Exception\n3. rule 1: imports legacy"
    )

    review = parse_review(text)

    assert review.violations == (
        "rule 4: print() in create_order",
        "rule 5: raises Exception",
        "rule 1: imports legacy",
    )
    assert not review.clean


@pytest.mark.parametrize(
    "text", ["", None, "I think the code looks mostly fine but maybe", "Looks good!\nShip it."]
)
def test_unparseable_fails_open(text: str | None) -> None:
    """Neither CLEAN nor a list: treated as clean, flagged as unparsed."""
    review = parse_review(text)

    assert (review.clean, review.parsed) == (True, False)
