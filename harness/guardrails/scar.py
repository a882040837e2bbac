"""Scar-tissue warnings on shipped code: hardcoded keys, no network timeouts, bare except."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness.pyast import Folder, parse_module

__all__ = ["ScarCheck", "scar_warnings"]

_SECRET_NAME = re.compile(r"(?i)(api[_-]?key|secret|token|passw(or)?d|credential|auth[_-]?key)")
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")  # "OPENAI_API_KEY": a name, not a key
_PLACEHOLDER = re.compile(r"(?i)^(\$.*|\{.*\}|<.*>|x+|\*+|changeme|(your|dummy|fake|example)\b.*)$")
_HTTP_VERBS = ("get", "post", "put", "patch", "delete", "head", "options", "request")
_TIMEOUT_AT = {f"requests.{v}": None for v in _HTTP_VERBS}
_TIMEOUT_AT |= {f"httpx.{v}": None for v in (*_HTTP_VERBS, "stream")}
_TIMEOUT_AT |= {"urllib.request.urlopen": 2, "socket.create_connection": 1}
_TIMEOUT_AT |= {"http.client.HTTPConnection": 2, "http.client.HTTPSConnection": 2}


@dataclass(frozen=True)
class ScarCheck:
    """An operator's regex warning from the policy's `scar_checks`."""

    id: str
    pattern: re.Pattern[str]
    message: str


def scar_warnings(code: str, checks: tuple[ScarCheck, ...], language: str = "python") -> list[str]:
    """Readable warnings, `line N: what [check-id]`, in line order. The built-in checks read
    Python's ast, so code in another language gets the operator's regexes only."""
    found: list[tuple[int, str, str]] = []
    for check in checks:
        for match in check.pattern.finditer(code):
            found.append((code.count("\n", 0, match.start()) + 1, check.message, check.id))
    if language == "python":
        found.extend(_python_checks(code))
    return [
        f"{f'line {line}: ' if line else ''}{message} [{check}]"
        for line, message, check in sorted(set(found))
    ]


def _python_checks(code: str) -> list[tuple[int, str, str]]:
    found: list[tuple[int, str, str]] = []
    try:
        tree = parse_module(code)
    except (SyntaxError, ValueError):
        found.append((0, "the code does not parse, so the built-in checks were skipped", "parse"))
    else:
        folder = Folder(tree)
        for node in ast.walk(tree):
            found.extend(_builtin(node, folder))
    return found


def _builtin(node: ast.AST, folder: Folder) -> Iterator[tuple[int, str, str]]:
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.ExceptHandler) and node.type is None:
        yield (
            line,
            "bare `except:` also catches KeyboardInterrupt; name the exceptions",
            "bare-except",
        )
    for name, value in _named_strings(node):
        if _SECRET_NAME.search(name) and _looks_like_secret(value):
            yield (
                line,
                f"{name} looks like a hardcoded credential; read it from the environment",
                "hardcoded-key",
            )
    if isinstance(node, ast.Call):
        callee = folder.qualname(node.func) or ""
        if callee in _TIMEOUT_AT and not _has_timeout(node, _TIMEOUT_AT[callee]):
            yield (
                line,
                f"{callee}() without a timeout can hang the service; pass timeout=",
                "no-timeout",
            )


def _named_strings(node: ast.AST) -> Iterator[tuple[str, str]]:
    """(name, string) pairs: `API_KEY = "..."`, `token="..."` arguments, `{"secret": "..."}`."""
    pairs: list[tuple[ast.expr | str | None, ast.expr | None]] = []
    if isinstance(node, ast.Assign):
        pairs = [(t, node.value) for t in node.targets]
    elif isinstance(node, ast.AnnAssign):
        pairs = [(node.target, node.value)]
    elif isinstance(node, ast.Call):
        pairs = [(k.arg, k.value) for k in node.keywords]
    elif isinstance(node, ast.Dict):
        pairs = list(zip(node.keys, node.values, strict=True))  # type: ignore[arg-type]
    for target, value in pairs:
        name = _name_of(target)
        if name and isinstance(value, ast.Constant) and isinstance(value.value, str):
            yield name, value.value


def _name_of(target: ast.expr | str | None) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Constant) and isinstance(target.value, str):
        return target.value
    return ""


def _looks_like_secret(value: str) -> bool:
    if len(value) < 8 or any(c.isspace() for c in value) or "://" in value:
        return False
    return not (_ENV_NAME.match(value) or _PLACEHOLDER.match(value) or value.startswith("/"))


def _has_timeout(node: ast.Call, position: int | None) -> bool:
    if any(k.arg == "timeout" or k.arg is None for k in node.keywords):  # None: **kwargs
        return True
    return position is not None and len(node.args) > position
