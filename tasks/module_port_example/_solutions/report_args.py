"""Command-line options of the `report` tool, parsed with argparse."""

from __future__ import annotations

import argparse
import datetime as dt
from typing import NamedTuple

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


class _Parser(argparse.ArgumentParser):
    """argparse prints usage and exits; callers of parse_args get a ValueError instead."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ValueError(f"report: {message}")


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, got {value!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """The parser, for `--help` and for parse_args."""
    parser = _Parser(prog="report", usage="%(prog)s [options] INPUT...")
    parser.add_argument("inputs", nargs="*", metavar="INPUT")
    parser.add_argument("-o", "--output", default="-", help="where to write")
    parser.add_argument("-f", "--format", choices=FORMATS, default="text")
    parser.add_argument("-n", "--limit", type=int, default=None)
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument("-t", "--tag", dest="tags", action="append", default=[])
    parser.add_argument("--since", type=_date, default=None)
    return parser


def parse_args(argv: list[str]) -> Options:
    """Parse `argv` (without the program name); bad input raises ValueError("report: ...")."""
    # optparse took options between inputs; plain parse_args stops at the first input
    values = build_parser().parse_intermixed_args(list(argv))
    if not values.inputs:
        raise ValueError("report: give at least one INPUT")
    if values.limit is not None and not 1 <= values.limit <= MAX_LIMIT:
        raise ValueError(f"report: --limit must be between 1 and {MAX_LIMIT}")
    tags = tuple(dict.fromkeys(t.lower() for t in values.tags))
    return Options(
        inputs=tuple(values.inputs),
        output=values.output,
        format=values.format,
        limit=values.limit,
        verbose=values.verbose,
        tags=tags,
        since=values.since,
    )
