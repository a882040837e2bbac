"""The secrets: keys checked without quoting them; scrub() masks values and their pieces."""

from __future__ import annotations

import pytest

from harness.keys import MASK, key_problem, scrub


def test_scrub_masks_the_key_its_pieces_and_its_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key around a newline is masked whole, piece by piece, and as repr() shows it."""
    monkeypatch.setenv("VENDOR_API_KEY", "FIRSTPART1234\nSECONDPART5678")
    text = "a FIRSTPART1234 b SECONDPART5678 c 'FIRSTPART1234\\nSECONDPART5678'"

    scrubbed = scrub(text)

    assert ("FIRSTPART" in scrubbed, "SECONDPART" in scrubbed, MASK in scrubbed) == (
        False,
        False,
        True,
    )


def test_key_problem_names_the_variable_never_the_value() -> None:
    """A control character, a space or non-ASCII inside a key is named by variable only."""
    found = [key_problem("K", v) for v in ("abc\ndefgh", "abc defgh", "abcé", " fine-key\n")]

    assert [p is not None and "K" in p and "abc" not in p for p in found[:3]] == [True] * 3
    assert found[3] is None


def test_text_without_secrets_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Honest text passes through as it was."""
    monkeypatch.setenv("VENDOR_API_KEY", "a-long-secret-value")

    assert scrub("def add(a, b):\n    return a + b\n") == "def add(a, b):\n    return a + b\n"


def test_a_declared_variable_is_secret_whatever_its_name(monkeypatch):
    """A key read from a variable named like no secret (an endpoint's api_key_env) is
    masked once declared."""
    from harness.keys import declare

    monkeypatch.setenv("LLM_GATEWAY_AUTH_HEADER_VALUE", "gw-auth-value-1234567890")
    before = scrub("sent gw-auth-value-1234567890")
    declare("LLM_GATEWAY_AUTH_HEADER_VALUE")

    assert (before, scrub("sent gw-auth-value-1234567890")) == (
        "sent gw-auth-value-1234567890",
        f"sent {MASK}",
    )
