"""Command-line options of the `report` tool, parsed with optparse (deprecated since 3.2)."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple
from optparse import OptionParser, OptionValueError

FORMATS = ("text", "csv", "json")
MAX_LIMIT = 10_000


class Options(NamedTuple):
    """What the tool was asked to do."""

    inputs: tuple[str, ...]
    output: str
    format: str
    limit: int | None
    verbose: int
    tags: tuple[str, ...]
    since: dt.date | None


class _Parser(OptionParser):
    """optparse prints usage and exits; callers of parse_args get a ValueError instead."""

    def error(self, msg: str) -> None:
        raise ValueError(f"report: {msg}")


def _date(option, opt_str, value, parser) -> None:
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise OptionValueError(f"{opt_str}: expected YYYY-MM-DD, got {value!r}") from None
    setattr(parser.values, option.dest, day)


def build_parser() -> OptionParser:
    """The parser, for `--help` and for parse_args."""
    parser = _Parser(usage="%prog [options] INPUT...", prog="report", add_help_option=True)
    parser.add_option("-o", "--output", dest="output", default="-", help="where to write")
    parser.add_option("-f", "--format", dest="format", choices=FORMATS, default="text")
    parser.add_option("-n", "--limit", dest="limit", type="int", default=None)
    parser.add_option("-v", "--verbose", dest="verbose", action="count", default=0)
    parser.add_option("-t", "--tag", dest="tags", action="append", default=[])
    parser.add_option(
        "--since", dest="since", type="string", action="callback", callback=_date, default=None
    )
    return parser


def parse_args(argv: list[str]) -> Options:
    """Parse `argv` (without the program name); bad input raises ValueError("report: ...")."""
    values, inputs = build_parser().parse_args(list(argv))
    if not inputs:
        raise ValueError("report: give at least one INPUT")
    if values.limit is not None and not 1 <= values.limit <= MAX_LIMIT:
        raise ValueError(f"report: --limit must be between 1 and {MAX_LIMIT}")
    tags = tuple(dict.fromkeys(t.lower() for t in values.tags))
    return Options(
        inputs=tuple(inputs),
        output=values.output,
        format=values.format,
        limit=values.limit,
        verbose=values.verbose,
        tags=tags,
        since=values.since,
    )
