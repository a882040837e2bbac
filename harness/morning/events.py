"""`harness events`: a night's events filtered and aligned, and one attempt's artefacts."""

from __future__ import annotations

import fnmatch
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import BadInput
from harness.llm import decode_tool_turn
from harness.store import STEPS, RunFolder

__all__ = [
    "ARTEFACTS",
    "EventFilter",
    "check_filter",
    "check_pattern",
    "follow_events",
    "select_events",
    "show_artefact",
    "with_attempts",
]

ARTEFACTS = ("prompt", "reply", "code", "tests", "tools")


@dataclass(frozen=True)
class EventFilter:
    """What to keep: a task id, an attempt number, an event name (a glob: `call_*`)."""

    task: str | None = None
    attempt: int | None = None
    event: str | None = None

    def keeps(self, event: dict[str, Any], attempt: int | None) -> bool:
        if self.task is not None and event.get("task_id") != self.task:
            return False
        if self.attempt is not None and attempt != self.attempt:
            return False
        return self.event is None or fnmatch.fnmatchcase(str(event["event"]), self.event)


def with_attempts(events: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], int | None]]:
    """Each event with the attempt it belongs to. Events that name no attempt (`tests_ran`)
    belong to the attempt their task is in: from its first numbered event to attempt_finished."""
    current: dict[str, int | None] = {}
    for event in events:
        task = event.get("task_id")
        if event["event"] == "attempt_finished":
            yield event, event.get("n")
            current[task] = None
            continue
        attempt = event.get("attempt")
        if isinstance(attempt, int):
            current[task] = attempt
        yield event, attempt if isinstance(attempt, int) else current.get(task)


def select_events(
    events: Iterable[dict[str, Any]], keep: EventFilter
) -> list[tuple[dict[str, Any], int | None]]:
    """The events `keep` keeps; a filter that names nothing the run has is BadInput (exit 2)
    listing what exists, so a typo is never an empty answer."""
    rows = list(with_attempts(events))
    check_filter(rows, keep)
    return [(e, n) for e, n in rows if keep.keeps(e, n)]


def check_filter(rows: list[tuple[dict[str, Any], int | None]], keep: EventFilter) -> None:
    """Refuse a --task, --attempt or --event that matches nothing the run recorded."""
    tasks = sorted({str(e["task_id"]) for e, _ in rows if e.get("task_id")})
    if keep.task is not None and keep.task not in tasks:
        raise BadInput(f"--task {keep.task}: no such task in this run; tasks: {_listed(tasks)}")
    of_task = [(e, n) for e, n in rows if keep.task is None or e.get("task_id") == keep.task]
    numbers = sorted({n for _, n in of_task if n is not None})
    if keep.attempt is not None and keep.attempt not in numbers:
        raise BadInput(f"--attempt {keep.attempt}: no such attempt; attempts: {_listed(numbers)}")
    if keep.event is None:
        return
    check_pattern(keep)
    names = sorted({str(e["event"]) for e, _ in rows})
    if not any(fnmatch.fnmatchcase(name, keep.event) for name in names):
        raise BadInput(
            f"--event {keep.event}: matches no event of this run; events: {_listed(names)}"
        )


def check_pattern(keep: EventFilter) -> None:
    """Refuse an --event glob that cannot be what was meant (before anything is read)."""
    if keep.event is not None and keep.event.count("[") != keep.event.count("]"):
        raise BadInput(f"--event {keep.event!r}: unbalanced [ ]; e.g. 'call_*' or 'task_finished'")


def follow_events(
    path: Path, ended: Callable[[], bool], poll_s: float = 0.25
) -> Iterator[dict[str, Any]]:
    """Each event of `path` as it is written, like `tail -f`: a line is yielded once its
    newline is written (a line cut short waits for the rest). It ends once nothing new comes
    and `ended()` says no night writes the file any more; what was written by then is all
    read. A run_finished alone never ends it: a resume may already be running that has not
    written its run_started yet."""
    pending, offset, last_look = b"", 0, False
    while True:
        chunk = _read_from(path, offset)
        offset += len(chunk)
        *lines, pending = (pending + chunk).split(b"\n")
        yield from _parsed(lines)
        if chunk:
            continue
        if last_look:
            return
        last_look = ended()  # one more read after this: what it wrote before it ended
        if not last_look:
            time.sleep(poll_s)


def _read_from(path: Path, offset: int) -> bytes:
    try:
        with open(path, "rb") as stream:
            stream.seek(offset)
            return stream.read()
    except FileNotFoundError:  # the night has not opened it yet
        return b""


def _parsed(lines: list[bytes]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            event = json.loads(line.decode("utf-8", errors="replace"))
        except ValueError:
            continue  # a line a kill cut short, completed by the next session's first line
        if isinstance(event, dict) and "event" in event:
            yield event


def _listed(items: list[Any]) -> str:
    return ", ".join(str(i) for i in items) or "(none)"


def _task(run: RunFolder, task: str | None) -> str:
    known = run.task_ids()
    if task is None:
        if len(known) != 1:
            raise BadInput(f"--show needs --task: one of {', '.join(known) or '(none)'}")
        return known[0]
    if task not in known:
        raise BadInput(f"--task {task}: not in run {run.run_id}; tasks: {', '.join(known)}")
    return task


def _attempt(run: RunFolder, task: str, attempt: int | None) -> int:
    """The attempt asked for, else the task's best (else its last)."""
    if attempt is not None:
        return attempt
    summary = run.summary() or {}
    for entry in summary.get("tasks", []):
        if entry["id"] == task and entry.get("best_attempt"):
            return int(entry["best_attempt"])
    numbers = [a.record.n for a in run.attempts(task)]
    if not numbers:
        raise BadInput(f"task {task} has no attempt in run {run.run_id}")
    return numbers[-1]


def show_artefact(
    run: RunFolder, what: str, task: str | None, attempt: int | None, step: str | None = None
) -> str:
    """The text of one attempt's prompt(s), reply(ies), candidate code, test results, or
    context tool rounds."""
    task = _task(run, task)
    n = _attempt(run, task, attempt)
    if what in ("prompt", "reply"):
        return _calls(run, what, task, n, step)
    if what == "tools":
        return _tool_rounds(run, task, n, step)
    if what == "code":
        path = run.candidate_file(task, n)
        if path is None:
            raise BadInput(f"task {task} has no candidate for attempt {n} in run {run.run_id}")
        return path.read_text(encoding="utf-8")
    return _tests(run, task, n)


def _rounds(run: RunFolder, task: str, n: int, step: str | None) -> list[str]:
    """The steps recorded for attempt `n`, each followed by its context rounds (`fix+1`)."""
    found = []
    for name in [step] if step else STEPS:
        k = 0
        while run.call_file(task, n, name if k == 0 else f"{name}+{k}", "reply").is_file():
            found.append(name if k == 0 else f"{name}+{k}")
            k += 1
    return found


def _calls(run: RunFolder, kind: str, task: str, n: int, step: str | None) -> str:
    paths = [run.call_file(task, n, s, kind) for s in _rounds(run, task, n, step) or [step or ""]]
    paths = [p for p in paths if p.is_file()]
    if not paths:
        where = f"step {step} of " if step else ""
        raise BadInput(f"no {kind} for {where}attempt {n} of task {task} in run {run.run_id}")
    if len(paths) == 1:
        return paths[0].read_text(encoding="utf-8")
    parts = [f"==> {p.relative_to(run.root)} <==\n{p.read_text(encoding='utf-8')}" for p in paths]
    return "\n".join(parts)


def _tool_rounds(run: RunFolder, task: str, n: int, step: str | None) -> str:
    """Each round of each step: the tool calls the model made, and each result's size (or
    the refusal); a round that answered says so."""
    lines, asked = [], False
    for name in _rounds(run, task, n, step):
        reply = run.call_file(task, n, name, "reply").read_text(encoding="utf-8")
        try:
            _, calls = decode_tool_turn(reply)
        except ValueError:
            lines.append(f"{name}: answered")
            continue
        asked = True
        results = {r[0]: r for r in _recorded_results(run, task, n, name)}
        lines.append(f"{name}: {len(calls)} tool call{'s' * (len(calls) != 1)}")
        for call in calls:
            _, _, content, is_error = results.get(call.id, (call.id, call.name, "", True))
            shown = f"error: {content}" if is_error else f"ok {len(content.encode())} bytes"
            lines.append(f"  {call.name} {call.arguments_json} -> {shown}")
    if not asked:
        raise BadInput(f"attempt {n} of task {task} made no context tool call in run {run.run_id}")
    return "\n".join(lines) + "\n"


def _recorded_results(run: RunFolder, task: str, n: int, step: str) -> list[list[Any]]:
    path = run.root / "calls" / task / f"{n}-{step}.tools.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []


def _tests(run: RunFolder, task: str, n: int) -> str:
    stored = {a.record.n: a for a in run.attempts(task)}.get(n)
    if stored is None:
        raise BadInput(f"task {task} has no recorded attempt {n} in run {run.run_id}")
    result, record = stored.result, stored.record
    if result is None:
        why = record.extraction_error or record.test_error or "no tests ran"
        return f"attempt {n}: no test result ({why})\n"
    lines = [f"attempt {n}: {result.passed}/{result.total} passed"]
    if result.error:
        lines.append(f"error: {result.error}")
    for case in result.cases:
        message = f"  {case.message}" if case.message and case.outcome.value != "passed" else ""
        lines.append(f"{case.outcome.value.upper():7} {case.nodeid}{message}")
    for case in result.failing():
        if case.details:
            lines += ["", f"--- {case.nodeid}", case.details.rstrip()]
    return "\n".join(lines) + "\n"
