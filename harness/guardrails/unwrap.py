"""What a command line really runs: through env prefixes, wrappers, shells, python -c, aliases."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from harness.guardrails.nested import nested
from harness.guardrails.shell import Simple
from harness.guardrails.values import Found
from harness.pyast import DYN

__all__ = ["effective", "fed", "program_name"]

_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done"})
_KEYWORDS |= frozenset({"while", "until", "coproc", "case", "esac"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "rbash"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_FEEDERS = frozenset({"echo", "printf", "cat"})  # `echo "git push -f" | sh`


@dataclass(frozen=True)
class _Wrapper:
    value_options: frozenset[str] = frozenset()
    operands: int = 0  # operands before the wrapped command: timeout's duration, flock's file
    assignments: bool = False  # NAME=value operands, as env takes them
    script_options: frozenset[str] = frozenset()  # option values a shell runs (su -c)
    split_options: frozenset[str] = frozenset()  # option values split into words (env -S)
    joins: bool = False  # the wrapped words are joined and given to a shell (ssh, watch, eval)
    runs_rest: bool = True  # False: only script_options run something (su, script)
    appends_stdin: bool = False  # stdin words become arguments (xargs)


def _w(options: str = "", **kwargs: object) -> _Wrapper:
    for key in ("script_options", "split_options"):
        if key in kwargs:
            kwargs[key] = frozenset(str(kwargs[key]).split())
    return _Wrapper(frozenset(options.split()), **kwargs)  # type: ignore[arg-type]


_SU = _w("-s --shell -g --group -G --supp-group", script_options="-c --command", runs_rest=False)
_RUNUSER = _w("-u --user -g --group -G --supp-group -s --shell", script_options="-c --command")
_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _w("-u -g -h -p -C -D -r -t -T -U --user --group --host --prompt --chdir --role"),
    "doas": _w("-u -C"),
    "env": _w("-u --unset -C --chdir", assignments=True, split_options="-S --split-string"),
    "nohup": _w(),
    "exec": _w("-a"),
    "command": _w(),
    "builtin": _w(),
    "setsid": _w(),
    "unbuffer": _w(),
    "busybox": _w(),
    "time": _w("-f --format -o --output"),
    "nice": _w("-n --adjustment"),
    "ionice": _w("-c -n -p -P -u --class --classdata"),
    "chrt": _w(operands=1),
    "taskset": _w(operands=1),
    "timeout": _w("-s --signal -k --kill-after", operands=1),
    "stdbuf": _w("-i -o -e --input --output --error"),
    "xargs": _w(
        "-I -n -P -L -d -E -s -a --max-args --max-procs --delimiter --arg-file", appends_stdin=True
    ),
    "flock": _w("-w --timeout -E --conflict-exit-code", operands=1, script_options="-c --command"),
    "su": _SU,
    "runuser": _RUNUSER,
    "script": _w("-E --echo -I -O -B -T -m", script_options="-c --command", runs_rest=False),
    "watch": _w("-n --interval", joins=True),
    "ssh": _w(
        "-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w", operands=1, joins=True
    ),
    "eval": _w(joins=True),
}


def program_name(word: str) -> str:
    """`/usr/bin/GIT.exe` → `git`: what the rules call the program."""
    name = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    return name.removesuffix(".exe")


def fed(simple: Simple) -> tuple[str, ...]:
    """The text on a command's stdin that is visible in the script itself."""
    texts = list(simple.stdin)
    source = simple.source
    if source is not None and source.argv and program_name(source.argv[0]) in _FEEDERS:
        texts.extend(source.stdin)
        if program_name(source.argv[0]) != "cat":
            words = list(source.argv[1:])
            while words and words[0] in ("-n", "-e", "-E", "-ne", "-en"):
                words.pop(0)  # echo's own options; the rest is printed
            texts.append(" ".join(words))
    return tuple(texts)


def effective(argv: Sequence[str], stdin: Sequence[str] = ()) -> Iterator[Found]:
    """`argv` itself (after env assignments and shell keywords), then whatever it wraps."""
    words = list(argv)
    while words and (words[0] in _KEYWORDS or _ASSIGNMENT.match(words[0])):
        words.pop(0)
    if not words:
        return
    yield Found("argv", tuple(words))
    name, args = program_name(words[0]), words[1:]
    if DYN in name:  # `$SUDO git push -f`: the unknown word may be a wrapper
        yield Found("run", tuple(args), tuple(stdin))
    elif name in _WRAPPERS:
        yield from _unwrap(_WRAPPERS[name], args, stdin)
    elif name in _SHELLS:
        yield from _shell(args, stdin)
    else:
        yield from nested(name, args, stdin)


def _unwrap(wrapper: _Wrapper, args: list[str], stdin: Sequence[str]) -> Iterator[Found]:
    for i, arg in enumerate(args):  # `su bob -c TEXT`: the option may follow the user
        name, eq, value = arg.partition("=")
        if name in wrapper.script_options and (eq or i + 1 < len(args)):
            yield Found("script", value if eq else args[i + 1])
    i = 0
    while i < len(args) and args[i].startswith("-") and len(args[i]) > 1:
        name, eq, value = args[i].partition("=")
        if name == "--":
            i += 1
            break
        given = value if eq else (args[i + 1] if i + 1 < len(args) else "")
        if name in wrapper.split_options:
            yield Found("run", (*given.split(), *args[i + (1 if eq else 2) :]), tuple(stdin))
            return
        i += 1 if eq or name not in wrapper.value_options | wrapper.script_options else 2
    operands = args[i:]
    while wrapper.assignments and operands and _ASSIGNMENT.match(operands[0]):
        operands.pop(0)
    operands = operands[wrapper.operands :]
    if not (wrapper.runs_rest and operands):
        return
    if wrapper.joins:
        yield Found("script", " ".join(operands))
    elif wrapper.appends_stdin:
        yield Found("run", (*operands, *" ".join(stdin).split()))
    else:
        yield Found("run", tuple(operands), tuple(stdin))


def _shell(args: list[str], stdin: Sequence[str]) -> Iterator[Found]:
    """`bash -lc TEXT`, `sh -s < TEXT`, `bash <<< TEXT`: the text is a script."""
    command, i = False, 0
    while i < len(args) and args[i][:1] in ("-", "+") and len(args[i]) > 1 and args[i] != "--":
        command = command or (args[i][0] == "-" and not args[i].startswith("--") and "c" in args[i])
        i += 2 if args[i] in _SHELL_VALUE_OPTIONS else 1
    rest = args[i + 1 :] if i < len(args) and args[i] == "--" else args[i:]
    if command:
        yield from (Found("script", text) for text in rest[:1])
    elif not rest:
        yield from (Found("script", text) for text in stdin)
