"""The three read-only context tools, their fixed definitions, and their limits per step.

`read_file`, `list_dir` and `grep` (a fixed string, no regex, no shell) read only what
`Confinement` admits; a refused, missing or non-text path is an error result with the
reason and nothing read. Results are cut at `result_bytes` (visibly); a step and a task each
have a byte allowance, and a round at most `calls_per_round` calls.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import structlog

from harness.context.confine import Confinement, Refusal
from harness.context.reads import fingerprint
from harness.llm import CallRequest, ToolCall, ToolResult, ToolSpec

__all__ = ["TOOLS", "Limits", "ResultLog", "ToolBox"]

log = structlog.get_logger()
_MAX_FILE_BYTES = 2**20  # what the task list's own inputs may be: larger is no source file
_MAX_GREP_FILES = 2000
_TRUNCATION_NOTE = 120  # bytes a cut result may add past its limit to say where it stopped
_RESULT_FRAMING = 64 + _TRUNCATION_NOTE  # a result's id and wrapping, counted generously
_REFUSAL = 512  # an error result: its reason, which names the path (cut to fit)
_OVER = "not run"  # a call past calls_per_round (kept short: see round_tokens)


def _spec(name: str, description: str, properties: dict, required: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": properties, "required": required}
    return ToolSpec(name, description, json.dumps(schema, sort_keys=True))


_PATH = {"type": "string", "description": "relative to the task list's folder"}
TOOLS: tuple[ToolSpec, ...] = (
    _spec(
        "read_file",
        "Read a text file the task did not include. Returns up to max_bytes from offset.",
        {"path": _PATH, "offset": {"type": "integer"}, "max_bytes": {"type": "integer"}},
        ["path"],
    ),
    _spec(
        "list_dir",
        "List a folder's files and folders, depth 1 or 2.",
        {"path": _PATH, "depth": {"type": "integer"}},
        ["path"],
    ),
    _spec(
        "grep",
        "Find lines holding a fixed string (no regex) in a file or under a folder.",
        {"text": {"type": "string"}, "path": _PATH, "max_hits": {"type": "integer"}},
        ["text", "path"],
    ),
)


@dataclass(frozen=True)
class Limits:
    """`loop.context_tools` as numbers (defaults only in data/defaults.yaml)."""

    rounds: int
    calls_per_round: int
    result_bytes: int
    step_bytes: int
    task_bytes: int


class ResultLog(Protocol):
    """Where a round's results are kept before the next request (the run store), and
    served from again (a resume, a replay) instead of reading the disk."""

    def recorded(self, task_id: str, attempt: int, step: str) -> tuple[ToolResult, ...] | None: ...

    def record(
        self,
        task_id: str,
        attempt: int,
        step: str,
        results: tuple[ToolResult, ...],
        reads: dict[str, str],
    ) -> None: ...


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class ToolBox:
    """One task's tools: where they may read, its limits, and the bytes already shown."""

    confinement: Confinement
    limits: Limits
    task_id: str = ""
    log_to: ResultLog | None = None
    products: frozenset[Path] = frozenset()  # every task's output, resolved: never an input
    task_used: int = 0
    step_used: int = 0
    # What this round's calls read (resolved path → fingerprint), recorded with its results.
    _reads: dict[str, str] = field(init=False, default_factory=dict)
    _tools: dict[str, Callable[[dict], str]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._tools = {"read_file": self._read_file, "list_dir": self._list_dir, "grep": self._grep}

    def start_step(self) -> None:
        self.step_used = 0

    def round_tokens(self, request: CallRequest) -> int:
        """At most what one round adds to the next request's input, in tokens (bytes bound
        tokens): the model's turn (at most its output cap) and every result of the round."""
        results = min(
            self.limits.calls_per_round * (self.limits.result_bytes + _RESULT_FRAMING),
            self.limits.step_bytes - self.step_used + self.limits.calls_per_round * _REFUSAL,
        )
        # Calls past the limit are each answered `_OVER`: its id and seven bytes, no more
        # than the call itself (its id, name and arguments) took of the turn, so at most the
        # turn's size again (the turn is the model's output: at most its cap).
        return 2 * request.route.max_tokens + max(results, 0)

    def run(
        self, calls: tuple[ToolCall, ...], attempt: int = 0, step: str = ""
    ) -> tuple[ToolResult, ...]:
        """Every call of one round answered in order; past `calls_per_round`, refused. A
        round already recorded (a resume, a replay) is served from its record, not the disk."""
        found = self._recorded(calls, attempt, step)
        if found is not None:
            return found
        self._reads = {}
        results = tuple(
            self._one(call) if i < self.limits.calls_per_round else self._over(call)
            for i, call in enumerate(calls)
        )
        if self.log_to is not None:
            self.log_to.record(self.task_id, attempt, step, results, self._reads)
        return results

    def _recorded(
        self, calls: tuple[ToolCall, ...], attempt: int, step: str
    ) -> tuple[ToolResult, ...] | None:
        if self.log_to is None:
            return None
        found = self.log_to.recorded(self.task_id, attempt, step)
        if found is None or [r.call_id for r in found] != [c.id for c in calls]:
            return None
        for call, result in zip(calls, found, strict=True):
            size = 0 if result.is_error else len(result.content.encode("utf-8"))
            self.step_used += size
            self.task_used += size
            path = str(call.arguments.get("path"))[:300]
            log.info("context_request", tool=call.name, path=path, ok=not result.is_error,
                     bytes=size, recorded=True)  # fmt: skip
        return found

    def _over(self, call: ToolCall) -> ToolResult:
        return self._answer(call, "", _OVER)

    def _one(self, call: ToolCall) -> ToolResult:
        tool = self._tools.get(call.name)
        args = call.arguments
        try:
            if tool is None:
                raise _Refused(f"no tool {call.name!r}: use read_file, list_dir or grep")
            if self.step_used >= self.limits.step_bytes or self.task_used >= self.limits.task_bytes:
                raise _Refused("the context allowance for this step or task is spent: answer")
            content = tool(args)
        except _Refused as refused:
            return self._answer(call, "", refused.reason)
        except OSError as exc:  # the disk under a read root, not the model: that call's error
            return self._answer(call, "", f"{args.get('path')!r} cannot be read ({exc.strerror})")
        shown = len(content.encode("utf-8"))
        self.step_used += shown
        self.task_used += shown
        return self._answer(call, content, None)

    def _answer(self, call: ToolCall, content: str, refused: str | None) -> ToolResult:
        path = call.arguments.get("path")
        ok = refused is None
        size = len(content.encode("utf-8")) if ok else 0
        log.info("context_request", tool=call.name, path=str(path)[:300], ok=ok, bytes=size)
        if refused is not None:
            reason = refused.encode("utf-8")[: _REFUSAL - 16].decode("utf-8", errors="ignore")
            return ToolResult(call.id, call.name, reason, is_error=True)
        return ToolResult(call.id, call.name, content)

    def _room(self, asked: object = None) -> int:
        """Bytes this result may hold: the per-result cap, what the step and task have left."""
        room = min(
            self.limits.result_bytes,
            self.limits.step_bytes - self.step_used,
            self.limits.task_bytes - self.task_used,
        )
        if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0:
            room = min(room, asked)
        return max(room, 0)

    def _target(self, args: dict) -> Path:
        rel = args.get("path")
        found = self.confinement.resolve(rel if isinstance(rel, str) else "")
        if isinstance(found, Refusal):
            raise _Refused(found.reason)
        return found

    def _read_file(self, args: dict) -> str:
        target = self._target(args)
        data = _text_bytes(target, str(args.get("path")))
        self._saw(target, data)
        offset = args.get("offset", 0)
        offset = offset if isinstance(offset, int) and 0 <= offset <= len(data) else 0
        room = self._room(args.get("max_bytes"))
        piece = data[offset : offset + room].decode("utf-8", errors="ignore")
        end = offset + len(piece.encode("utf-8"))
        if end < len(data):
            piece += (
                f"\n[truncated: bytes {offset}-{end} of {len(data)}; read again with offset={end}]"
            )
        return piece

    def _list_dir(self, args: dict) -> str:
        target = self._target(args)
        if not target.is_dir():
            raise _Refused(f"{args.get('path')!r} is not a folder")
        depth = args.get("depth", 1)
        depth = 2 if depth == 2 else 1
        lines = self._walk(target, depth)
        return _cut("\n".join(lines), self._room())

    def _walk(self, folder: Path, depth: int) -> list[str]:
        try:
            entries = sorted(folder.iterdir())
        except OSError as exc:  # an unreadable folder: said for that path, never a fault
            shown = self.confinement.shown(folder)
            raise _Refused(f"{shown!r} cannot be listed ({exc.strerror})") from None
        lines = []
        for entry in entries:
            admitted = self._in(entry)
            if isinstance(admitted, Refusal):
                continue
            name = self.confinement.shown(folder / entry.name)
            is_dir = admitted.is_dir()
            lines.append(name + ("/" if is_dir else ""))
            if is_dir and depth > 1:
                try:
                    lines.extend(self._walk(admitted, depth - 1))
                except _Refused as refused:
                    lines.append(f"  [{refused.reason}]")
        return lines

    def _grep(self, args: dict) -> str:
        text = args.get("text")
        if not isinstance(text, str) or not text:
            raise _Refused("grep needs a non-empty fixed string in `text`")
        target = self._target(args)
        hits_wanted = args.get("max_hits", 50)
        hits_wanted = hits_wanted if isinstance(hits_wanted, int) and hits_wanted > 0 else 50
        hits: list[str] = []
        for path in self._files(target):
            try:
                data = _text_bytes(path, path.name)
            except _Refused:
                continue
            self._saw(path, data)
            lines = data.decode("utf-8").splitlines()
            for number, line in enumerate(lines, 1):
                if text in line:
                    hits.append(f"{self.confinement.shown(path)}:{number}: {line[:300]}")
                if len(hits) >= hits_wanted:
                    return _cut("\n".join(hits), self._room())
        return _cut("\n".join(hits) or "no match", self._room())

    def _files(self, target: Path) -> list[Path]:
        if not target.is_dir():
            return [target]
        found = []

        def unreadable(exc: OSError) -> None:
            if Path(exc.filename or "") == target:  # the folder asked for; below it, skipped
                raise _Refused(
                    f"{self.confinement.shown(target)!r} cannot be listed ({exc.strerror})"
                )

        for root, dirs, files in os.walk(target, onerror=unreadable):
            dirs[:] = sorted(d for d in dirs if not isinstance(self._in(Path(root) / d), Refusal))
            for name in sorted(files):
                admitted = self._in(Path(root) / name)
                if not isinstance(admitted, Refusal):
                    found.append(admitted)
                if len(found) >= _MAX_GREP_FILES:
                    return found
        return found

    def _saw(self, path: Path, data: bytes) -> None:
        """Note a file whose bytes a result was made from (read, or searched), unless the
        night writes it (an output): carry-over compares these with the disk next night."""
        if path not in self.products:
            self._reads.setdefault(str(path), fingerprint(path, data))

    def _in(self, path: Path) -> Path | Refusal:
        try:
            target = path.resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop: left out, never a fault
            return Refusal(f"{path.name!r} cannot be resolved ({type(exc).__name__})")
        return self.confinement.admit(target, path.name)


def _text_bytes(target: Path, rel: str) -> bytes:
    """A regular UTF-8 file's bytes, read once through one descriptor, or a refusal."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _Refused(f"{rel!r} does not exist") from None
    except OSError as exc:
        raise _Refused(f"{rel!r} cannot be opened ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _Refused(f"{rel!r} is not a regular file")
        if info.st_size > _MAX_FILE_BYTES:
            raise _Refused(f"{rel!r} is larger than {_MAX_FILE_BYTES} bytes")
        data = handle.read(_MAX_FILE_BYTES + 1)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused(f"{rel!r} is not UTF-8 text") from None
    return data


def _cut(text: str, room: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= room:
        return text
    kept = data[:room].decode("utf-8", errors="ignore")
    return f"{kept}\n[truncated at {room} bytes]"
