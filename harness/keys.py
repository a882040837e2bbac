"""The process's secrets: API keys checked at start-up, and scrub() masking them by value.

Every text that leaves the process passes scrub() at its boundary: structlog's processor
(console and events.jsonl), fsio's writes (summaries, call files, attempts), the run store's
transactions, and the CLI's own messages. A key is masked whole, and so is each piece of it
that a library may quote on its own (the parts around a control character, its repr).
A variable is secret by its name (`*_KEY`, `*_TOKEN`, ...) or because a key is read from it
(`declare`: an endpoint's `api_key_env` may be named anything).
"""

from __future__ import annotations

import os
import re

__all__ = ["MASK", "declare", "key_problem", "scrub", "secret_values"]

MASK = "[REDACTED]"
# Shapes of vendor credentials: masked even when the value is not in this environment.
_SHAPES = re.compile(r"(sk-ant-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|sk-[A-Za-z0-9]{20,})")
_SECRET_NAMES = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS)$", re.I)
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
    """`text` with every secret value (and piece of one) and every API-key shape masked."""
    for value in secret_values():
        if value in text:
            text = text.replace(value, MASK)
    return _SHAPES.sub(MASK, text)
