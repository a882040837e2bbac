"""Context tool results as a run recorded them: in the store (durably, before the next
request, so a resume serves them again) and beside the call's files in the run folder (so a
replay serves them from there, never from the disk it was read from)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.fsio import write_log
from harness.llm import ToolResult
from harness.store.db import Db

__all__ = ["FolderToolLog", "RunToolLog", "ServedToolLog"]


def _dumps(results: tuple[ToolResult, ...]) -> str:
    return json.dumps([[r.call_id, r.name, r.content, r.is_error] for r in results])


def _loads(text: str) -> tuple[ToolResult, ...]:
    return tuple(ToolResult(str(i), str(n), str(c), bool(e)) for i, n, c, e in json.loads(text))


def _file(root: Path, task_id: str, attempt: int, step: str) -> Path:
    return Path(root) / "calls" / task_id / f"{attempt}-{step}.tools.json"


@dataclass(frozen=True)
class RunToolLog:
    """One run's tool results: the store row is what a resume reads; the file, a replay."""

    db: Db
    run_id: str
    root: Path

    def recorded(self, task_id: str, attempt: int, step: str) -> tuple[ToolResult, ...] | None:
        rows = self.db.read(
            "SELECT results FROM tool_results WHERE run_id=? AND task_id=? AND attempt=?"
            " AND step=?",
            (self.run_id, task_id, attempt, step),
        )
        return _loads(rows[0][0]) if rows else None

    def record(
        self,
        task_id: str,
        attempt: int,
        step: str,
        results: tuple[ToolResult, ...],
        reads: dict[str, str],
    ) -> None:
        text = _dumps(results)
        with self.db.tx() as conn:  # durable: the next request is sent only after this
            conn.execute(
                "INSERT OR REPLACE INTO tool_results (run_id, task_id, attempt, step, results)"
                " VALUES (?,?,?,?,?)",
                (self.run_id, task_id, attempt, step, text),
            )
            # The first read of a path in the night is kept: a file that changed during it
            # then differs from its record, and carry-over looks at the task again.
            conn.executemany(
                "INSERT OR IGNORE INTO tool_reads (run_id, task_id, path, fingerprint)"
                " VALUES (?,?,?,?)",
                [(self.run_id, task_id, path, mark) for path, mark in sorted(reads.items())],
            )
        write_log(_file(self.root, task_id, attempt, step), text + "\n")


@dataclass(frozen=True)
class FolderToolLog:
    """A recorded run folder's tool results, read-only (what `--provider replay` serves)."""

    root: Path

    def recorded(self, task_id: str, attempt: int, step: str) -> tuple[ToolResult, ...] | None:
        path = _file(self.root, task_id, attempt, step)
        try:
            return _loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError):
            return None

    def record(
        self,
        task_id: str,
        attempt: int,
        step: str,
        results: tuple[ToolResult, ...],
        reads: dict[str, str],
    ) -> None:
        pass  # a recording is never written to


@dataclass(frozen=True)
class ServedToolLog:
    """A replay's tool results: served from the recorded run folder and kept in the replay's
    own run as they are served, so its record (`events --show tools`, a resume) holds what
    the model was given; a round the recording lacks is run and recorded as usual."""

    recording: FolderToolLog
    own: RunToolLog

    def recorded(self, task_id: str, attempt: int, step: str) -> tuple[ToolResult, ...] | None:
        found = self.own.recorded(task_id, attempt, step)  # a resumed replay
        if found is not None:
            return found
        found = self.recording.recorded(task_id, attempt, step)
        if found is not None:
            self.own.record(task_id, attempt, step, found, {})
        return found

    def record(
        self,
        task_id: str,
        attempt: int,
        step: str,
        results: tuple[ToolResult, ...],
        reads: dict[str, str],
    ) -> None:
        self.own.record(task_id, attempt, step, results, reads)
