"""Command-line options of the `report` tool, parsed with argparse."""

from __future__ import annotations

import argparse
import datetime as dt
from typing import NamedTuple

FORMATS = ("text", "csv", "json")
MAX_LIMIT = 10_000

# Every option by its long name, and whether it takes a value (--help exits, as before).
_LONG = {
    "--output": True,
    "--format": True,
    "--limit": True,
    "--verbose": False,
    "--tag": True,
    "--since": True,
    "--help": False,
}
# argparse before Python 3.13 drops a value `--` (`-t --`): it crosses under this name.
_DASHES = "\0--"
_SHORT = {"-o": "--output", "-f": "--format", "-n": "--limit", "-v": "--verbose",
          "-t": "--tag", "-h": "--help"}  # fmt: skip


class Options(NamedTuple):
    """What the tool was asked to do."""

    inputs: tuple[str, ...]
    output: str
    format: str
    limit: int | None
    verbose: int
    tags: tuple[str, ...]
    since: dt.date | None


class _Parser(argparse.ArgumentParser):
    """argparse prints usage and exits; callers of parse_args get a ValueError instead."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ValueError(f"report: {message}")


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, got {value!r}") from None


def _integer(value: str) -> int:
    """An integer as the optparse version read one: 0x, 0b and a leading 0 (octal) too."""
    radix, digits = 10, value
    if value[:2].lower() == "0x":
        radix = 16
    elif value[:2].lower() == "0b":
        radix, digits = 2, value[2:] or "0"
    elif value[:1] == "0":
        radix = 8
    try:
        return int(digits, radix)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer value: {value!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """The parser, for `--help` and for parse_args."""
    parser = _Parser(prog="report", usage="%(prog)s [options] INPUT...")
    parser.add_argument("inputs", nargs="*", metavar="INPUT")
    parser.add_argument("-o", "--output", default="-", help="where to write")
    parser.add_argument("-f", "--format", choices=FORMATS, default="text")
    parser.add_argument("-n", "--limit", type=_integer, default=None)
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument("-t", "--tag", dest="tags", action="append", default=[])
    parser.add_argument("--since", type=_date, default=None)
    return parser


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """The command line read as the optparse version read it: options anywhere among the
    inputs, `--` ends them, a long option by any unambiguous prefix, short ones clustered
    (`-vv`, `-n5`), and an option's value taken whatever it looks like (`-o -f`). Returns
    the options as `--name=value` (nothing left for argparse to guess) and the inputs."""
    options: list[str] = []
    inputs: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            inputs += rest
            break
        if arg[:2] == "--":
            name, eq, value = arg.partition("=")
            name = _long_name(name)
            if _LONG[name] and not eq:
                value = _value(name, rest)
            elif eq and not _LONG[name]:
                raise ValueError(f"report: {name} option does not take a value")
            options.append(f"{name}={_kept(value)}" if _LONG[name] else name)
        elif arg[:1] == "-" and len(arg) > 1:
            for i, char in enumerate(arg[1:], start=2):
                name = _SHORT.get("-" + char)
                if name is None:
                    raise ValueError(f"report: no such option: -{char}")
                if not _LONG[name]:
                    options.append(name)
                    continue
                if i < len(arg):
                    rest.insert(0, arg[i:])
                options.append(f"{name}={_kept(_value('-' + char, rest))}")
                break
        else:
            inputs.append(arg)
        if options[-1:] == ["--help"]:
            break  # argparse prints the help and exits there, as optparse did
    return options, inputs


def _long_name(prefix: str) -> str:
    if prefix in _LONG:
        return prefix
    found = sorted(name for name in _LONG if name.startswith(prefix))
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(f"report: ambiguous option: {prefix} ({', '.join(found)}?)")
    raise ValueError(f"report: no such option: {prefix}")


def _value(option: str, rest: list[str]) -> str:
    if not rest:
        raise ValueError(f"report: {option} option requires 1 argument")
    return rest.pop(0)


def _kept(value: str) -> str:
    return _DASHES if value == "--" else value


def _back(value: str) -> str:
    return "--" if value == _DASHES else value


def parse_args(argv: list[str]) -> Options:
    """Parse `argv` (without the program name); bad input raises ValueError("report: ...")."""
    options, inputs = _split(list(argv))
    values = build_parser().parse_args(options)
    if not inputs:
        raise ValueError("report: give at least one INPUT")
    if values.limit is not None and not 1 <= values.limit <= MAX_LIMIT:
        raise ValueError(f"report: --limit must be between 1 and {MAX_LIMIT}")
    tags = tuple(dict.fromkeys(_back(t).lower() for t in values.tags))
    return Options(
        inputs=tuple(inputs),
        output=_back(values.output),
        format=values.format,
        limit=values.limit,
        verbose=values.verbose,
        tags=tags,
        since=values.since,
    )
