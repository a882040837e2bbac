"""Commands hidden in other programs' arguments: python -c, perl -e, awk, git, find -exec."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from harness.guardrails.values import Found

__all__ = ["nested"]

_PYTHON = re.compile(r"^(python|pypy)[0-9.]*w?$")
_PYTHON_VALUE_OPTIONS = frozenset({"-W", "-X", "-Q"})
# Interpreters whose inline code we cannot parse: their string literals are checked as shell.
_INLINE = {"perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",), "lua": ("-e",)}
_INLINE |= {"node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval")}
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})
_AWK_VALUE_OPTIONS = frozenset({"-F", "-v", "-f", "--field-separator", "--assign", "--file"})
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`([^`]*)`", re.S)
_GIT_ALIAS = re.compile(r"^alias\.[^=\s]+=(.*)$", re.S)
_GIT_ALIAS_KEY = re.compile(r"^alias\.[^=\s]+$")
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def nested(name: str, args: list[str], stdin: Sequence[str]) -> Iterator[Found]:
    """What program `name` would run or evaluate from its arguments (and visible stdin)."""
    if _PYTHON.match(name):
        yield from _python(args, stdin)
    elif name in _INLINE:
        yield from _inline(args, _INLINE[name])
    elif name in _AWK:
        yield from _awk(args)
    elif name == "git":
        yield from _git(args)
    elif name == "find":
        yield from _find(args)
    elif name == "alias":
        yield from (Found("script", a.partition("=")[2]) for a in args if "=" in a)


def _python(args: list[str], stdin: Sequence[str]) -> Iterator[Found]:
    """`python -c CODE`, and `python` / `python -` reading code from stdin."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] not in ("-m", "-"):
        if args[i].startswith("-c"):
            yield Found("code", args[i][2:] or (args[i + 1] if i + 1 < len(args) else ""))
            return
        i += 2 if args[i] in _PYTHON_VALUE_OPTIONS else 1
    if i >= len(args) or args[i] == "-":
        yield from (Found("code", text) for text in stdin)


def _literals(code: str) -> Iterator[Found]:
    for match in _LITERAL.finditer(code):
        yield Found("script", next(g for g in match.groups() if g is not None))


def _inline(args: list[str], options: tuple[str, ...]) -> Iterator[Found]:
    """`perl -e 'system("git push -f")'`: each quoted string is checked as a command."""
    letters = {o[1] for o in options if len(o) == 2}
    for i, arg in enumerate(args):
        cluster = arg.startswith("-") and not arg.startswith("--") and arg[1:].isalpha()
        if (arg in options or (cluster and arg[-1] in letters)) and i + 1 < len(args):
            yield from _literals(args[i + 1])  # -e CODE, -ne CODE
        elif arg[:2] in options and len(arg) > 2 and not cluster:
            yield from _literals(arg[2:])  # -eCODE


def _awk(args: list[str]) -> Iterator[Found]:
    """The program text of `awk 'BEGIN { system("...") }'` (unless it comes from -f)."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        if args[i] in ("-f", "--file"):
            return
        i += 2 if args[i] in _AWK_VALUE_OPTIONS else 1
    rest = args[i + 1 :] if i < len(args) and args[i] == "--" else args[i:]
    yield from _literals(rest[0]) if rest else ()


def _git(args: list[str]) -> Iterator[Found]:
    """Aliases (`-c alias.p='push -f'`, `config alias.p ...`), `submodule foreach CMD`,
    `rebase --exec CMD` and `bisect run CMD` run commands of their own."""
    for i, arg in enumerate(args):
        text = None
        if inline := _GIT_ALIAS.match(arg.removeprefix("-c")):
            text = inline.group(1)
        elif _GIT_ALIAS_KEY.match(arg) and i + 1 < len(args):
            text = args[i + 1]
        if text is not None:
            yield Found("script", text[1:] if text.startswith("!") else f"git {text}")
        rest = args[i + 1 :]
        if arg == "foreach" and "submodule" in args[:i]:
            yield Found("script", " ".join(a for a in rest if a not in ("--recursive", "-q")))
        elif arg in ("-x", "--exec") and "rebase" in args[:i] and rest:
            yield Found("script", rest[0])
        elif arg.startswith("--exec=") and "rebase" in args[:i]:
            yield Found("script", arg.partition("=")[2])
        elif arg == "run" and args[i - 1 : i] == ["bisect"] and rest:
            yield Found("run", tuple(rest))


def _find(args: list[str]) -> Iterator[Found]:
    """`find . -exec git push -f {} \\;` runs the words between -exec and `;` or `+`."""
    for i, arg in enumerate(args):
        if arg in _FIND_EXEC:
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            if end > i + 1:
                yield Found("run", tuple(args[i + 1 : end]))
