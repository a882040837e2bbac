"""The command lines of the morning-after commands (cli.py dispatches them)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.morning.events import ARTEFACTS
from harness.store import STEPS

__all__ = ["add_parsers"]

_RUN_HELP = "a run folder, a run dir (its latest run) or a run id under --run-dir"


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """`harness events`, `harness compare` and `harness export`."""
    _events(commands)
    compare = commands.add_parser("compare", help="two nights side by side, per task and total")
    compare.add_argument("run_a", metavar="RUN_A", help=_RUN_HELP)
    compare.add_argument("run_b", metavar="RUN_B", help=_RUN_HELP)
    _run_dir(compare)
    compare.add_argument("--json", action="store_true", help="the comparison as JSON")
    _export(commands)
    status = commands.add_parser("status", help="a night's progress: tasks done, spend vs cap")
    status.add_argument("run", nargs="?", help=f"{_RUN_HELP}; default: the latest run")
    _run_dir(status)
    status.add_argument("--json", action="store_true", help="the progress as one JSON object")
    status.add_argument(
        "--watch",
        action="store_true",
        help="follow the night to its end: the live board on a terminal, else a line (with "
        "--json an object) per change; Ctrl-C stops watching",
    )
    stop = commands.add_parser("stop", help="end a running night as SIGTERM does (exit 130)")
    stop.add_argument("run", nargs="?", help=f"{_RUN_HELP}; default: the latest run")
    _run_dir(stop)
    stop.add_argument(
        "--wait",
        type=float,
        default=900.0,
        metavar="S",
        help="seconds to wait for the night to write its summary and exit (default 900)",
    )
    stop.add_argument(
        "--config",
        type=Path,
        help="a config with `scale.engine: temporal`: stop the night RUN (its run id) on the "
        "cluster (docs/scale.md)",
    )


def _export(commands: argparse._SubParsersAction) -> None:
    export = commands.add_parser("export", help="export what the nights learned")
    kinds = export.add_subparsers(dest="export_kind", required=True)
    prefs = kinds.add_parser("prefs", help="preference pairs (best vs worse reply) as JSONL")
    prefs.add_argument("runs", nargs="+", metavar="RUN", help=_RUN_HELP)
    prefs.add_argument(
        "--out", type=Path, required=True, help="FILE.jsonl (and FILE_meta.jsonl beside it)"
    )
    prefs.add_argument(
        "--force", action="store_true", help="replace --out (and its sidecar) if they exist"
    )
    prefs.add_argument(
        "--same-prompt", action="store_true", help="only pairs whose replies answer one prompt"
    )
    _run_dir(prefs)


def _run_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run-dir", type=Path, default=Path("runs"), help="where run ids are looked up (runs/)"
    )


def _events(commands: argparse._SubParsersAction) -> None:
    events = commands.add_parser("events", help="a run's events, filtered; or one artefact")
    events.add_argument("run", nargs="?", help=f"{_RUN_HELP}; default: the latest run")
    _run_dir(events)
    events.add_argument("--task", metavar="ID", help="only this task's events")
    events.add_argument("--attempt", type=int, metavar="N", help="only this attempt's events")
    events.add_argument("--event", metavar="NAME", help="only events so named (a glob: 'call_*')")
    events.add_argument("--json", action="store_true", help="the events as JSON lines")
    events.add_argument(
        "--follow",
        "-f",
        action="store_true",
        help="keep printing events as the night writes them, until it ends (Ctrl-C stops)",
    )
    events.add_argument(
        "--show",
        choices=ARTEFACTS,
        help="print this artefact of --task's --attempt (default: its best attempt)",
    )
    events.add_argument(
        "--step",
        choices=STEPS,
        help="with --show prompt|reply|tools: only this step (and its rounds)",
    )
