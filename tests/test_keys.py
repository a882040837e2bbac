"""The secrets: keys checked without quoting them; scrub() masks values and their pieces."""

from __future__ import annotations

from pathlib import PurePath

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

    monkeypatch.setenv("LLM_GATEWAY_HEADER_VALUE", "gw-auth-value-1234567890")
    before = scrub("sent gw-auth-value-1234567890")
    declare("LLM_GATEWAY_HEADER_VALUE")

    assert (before, scrub("sent gw-auth-value-1234567890")) == (
        "sent gw-auth-value-1234567890",
        f"sent {MASK}",
    )


SECRET_FILES = [
    ".envrc", ".git-credentials", ".pgpass", ".netrc", ".npmrc", ".pypirc", ".env",
    ".env.production", "home/u/.aws/credentials", "home/u/.aws/config",
    "home/u/.config/gcloud/application_default_credentials.json",
    "home/u/.config/gcloud/credentials.db", "home/u/.azure/msal_token_cache.json",
    "home/u/.docker/config.json", "home/u/.kube/config", "home/u/.ssh/id_ed25519",
    "deploy/server.pem", "app.key",
]  # fmt: skip
HONEST_FILES = [
    "environment.py", "env/settings.py", "netrc_parser.py", "config.json", "kube/config.py",
    "docs/credentials.md", "src/keys.py", "docker/config.json",
]  # fmt: skip


def test_one_rule_names_every_credential_file_and_no_honest_one() -> None:
    """`.envrc`, `.git-credentials`, `.pgpass`, cloud credential files are secret files;
    ordinary source files that merely look alike are not."""
    from harness.keys import is_secret_file

    assert (
        [p for p in SECRET_FILES if not is_secret_file(PurePath(p))],
        [p for p in HONEST_FILES if is_secret_file(PurePath(p))],
    ) == ([], [])


def test_scrub_masks_a_connection_string_the_sandbox_redaction_also_masks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One secret-variable rule: a `..._DSN` or `DATABASE_URL` value is masked by scrub()."""
    monkeypatch.setenv("SENTRY_DSN", "https://abc123def@o1.ingest.example/42")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:pw123456@db/x")

    assert scrub("a https://abc123def@o1.ingest.example/42 b postgresql://u:pw123456@db/x") == (
        f"a {MASK} b {MASK}"
    )


def test_scrub_masks_the_password_of_any_url_and_keeps_the_rest() -> None:
    """`postgresql://user:pw@host/db` shows as `postgresql://user:[REDACTED]@host/db`."""
    text = "cannot reach postgresql://harness:s3cr3t-pw@db.internal:5432/harness (timeout)"

    assert scrub(text) == (
        f"cannot reach postgresql://harness:{MASK}@db.internal:5432/harness (timeout)"
    )
