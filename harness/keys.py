"""The process's secrets: API keys checked at start-up, scrub() masking them by value, and
the one rule for files that hold credentials (`is_secret_file`): context tools never read
one, and the sandbox never gets one copied in.

Every text that leaves the process passes scrub() at its boundary: structlog's processor
(console and events.jsonl), fsio's writes (summaries, call files, attempts), the run store's
transactions, and the CLI's own messages. A key is masked whole, and so is each piece of it
that a library may quote on its own (the parts around a control character, its repr).
A variable is secret by its name (`*_KEY`, `*_TOKEN`, ...) or because a key is read from it
(`declare`: an endpoint's `api_key_env` may be named anything).
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import PurePath

__all__ = ["MASK", "declare", "is_secret_file", "key_problem", "scrub", "secret_values"]

MASK = "[REDACTED]"
# Shapes of vendor credentials: masked even when the value is not in this environment.
_SHAPES = re.compile(r"(sk-ant-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|sk-[A-Za-z0-9]{20,})")
# A variable holds a secret when its name ends in one of these, or has one as a `_` word
# (AWS_SECRET_ACCESS_KEY, SENTRY_DSN, PGPASSWORD, DATABASE_URL, ...).
_SECRET_NAMES = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|DSN|COOKIE)$"
    r"|(^|_)(KEY|TOKEN|SECRET|PASS|PASSWORD|CREDENTIALS?|AUTH|PRIVATE|COOKIE|SESSION|DSN)(_|$)"
    r"|^DATABASE_URL$",
    re.I,
)
# Files that hold credentials by convention, by their own name...
_SECRET_FILE = re.compile(
    r"^(\.env(\..+)?|\.envrc|\.git-credentials|\.pgpass|[._]netrc|\.npmrc|\.pypirc|\.boto"
    r"|credentials(\.json)?|application_default_credentials\.json|id_(rsa|dsa|ecdsa|ed25519)"
    r".*|.+\.(pem|key|p12|pfx|kdbx|jks|keystore))$",
    re.IGNORECASE,
)
# ...or by the folder they are in: every file of these folders...
_SECRET_FOLDERS = frozenset({".aws", ".azure", ".ssh", ".gnupg"})
# ...and these (folder, name) pairs, a folder pair meaning every file under it.
_SECRET_PAIRS = frozenset({(".docker", "config.json"), (".kube", "config"), (".config", "gcloud")})
# The password of a URL's user part (`scheme://user:password@host`): masked in any URL, so a
# connection string (`scale.database`) never shows its password in a message or a log.
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:)[^/\s@]+(?=@)")
_MIN_PIECE = 8  # shorter pieces are too common to mask without garbling honest text
_BREAKS = re.compile(r"[\x00-\x20\x7f]+")
_DECLARED: set[str] = set()  # variables a key is read from, whatever their names


def declare(*names: str) -> None:
    """Treat the values of variables `names` as secrets from now on (keys read from them)."""
    _DECLARED.update(names)


def key_problem(name: str, value: str) -> str | None:
    """Why the value of variable `name` cannot be an API key, never quoting the value."""
    if _BREAKS.search(value.strip()):
        return (
            f"{name} holds a control character or space inside the key (e.g. a newline from "
            f"a pasted file); set {name} to the key alone"
        )
    if not value.isascii():
        return f"{name} holds a non-ASCII character; set {name} to the key alone"
    return None


def is_secret_file(path: PurePath) -> bool:
    """Whether `path` (resolved, or relative to a folder it is under) names a file that holds
    credentials by convention: `.env`, `.envrc`, `.netrc`, `.pgpass`, `.git-credentials`,
    `.npmrc`, `.pypirc`, keys, `~/.aws`, `~/.azure`, `~/.ssh`, gcloud's, docker's and kube's."""
    parts = path.parts
    if parts and _SECRET_FILE.match(parts[-1]):
        return True
    if any(part in _SECRET_FOLDERS for part in parts[:-1]):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts))


def secret_values() -> list[str]:
    """The values of secret-looking environment variables and their pieces, longest first."""
    found: set[str] = set()
    for name, value in os.environ.items():
        secret = name in _DECLARED or _SECRET_NAMES.search(name)
        if not secret or len(value.strip()) < _MIN_PIECE:
            continue
        found.update({value, value.strip(), repr(value.strip())[1:-1]})
        found.update(p for p in _BREAKS.split(value) if len(p) >= _MIN_PIECE)
    return sorted(found, key=len, reverse=True)


def scrub(text: str) -> str:
    """`text` with every secret value (and piece of one), every API-key shape and every
    URL's password masked."""
    for value in secret_values():
        if value in text:
            text = text.replace(value, MASK)
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK, text)
    return _SHAPES.sub(MASK, text)
