"""Finding a run and reading back what it recorded: summary, events, call files, attempts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import BadInput
from harness.store.db import StoreError
from harness.store.rundir import resolve_run
from harness.store.store import Store, StoredAttempt

__all__ = ["STEPS", "RunFolder", "find_run"]

STEPS = ("write", "review", "rewrite", "fix", "judge")  # judge: the principle judge (loop.judge)


def find_run(arg: str | Path | None, run_dir: Path = Path("runs")) -> RunFolder:
    """A run from a run folder, a run dir (its latest run) or a run id under `run_dir`."""
    candidates = [Path(run_dir)] if arg is None else [Path(arg), Path(run_dir) / str(arg)]
    for path in candidates:
        if path.exists():
            try:
                return RunFolder(resolve_run(path).resolve())  # `latest` names its run
            except FileNotFoundError as exc:
                raise BadInput(str(exc)) from exc
    raise BadInput(
        f"no run {str(arg)!r}: pass a run folder, a run dir (its latest run), "
        f"or a run id under {run_dir}/"
    )


@dataclass(frozen=True)
class RunFolder:
    """One `<run-dir>/<run_id>/` as the run directory contract lays it out."""

    root: Path

    @property
    def run_id(self) -> str:
        return self.root.name

    def summary(self) -> dict[str, Any] | None:
        """summary.json, or None while the run has none (still going, or killed)."""
        path = self.root / "summary.json"
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as exc:
            raise BadInput(f"{path}: not a readable summary: {exc}") from exc

    def require_summary(self) -> dict[str, Any]:
        summary = self.summary()
        if summary is None:
            raise BadInput(f"{self.root} has no summary.json: the run is still going or was killed")
        return summary

    def events(self) -> list[dict[str, Any]]:
        """Every complete event of events.jsonl (a line cut short by a kill is left out)."""
        path = self.root / "events.jsonl"
        if not path.is_file():
            return []
        found = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and "event" in event:
                found.append(event)
        return found

    def call_file(self, task_id: str, attempt: int, step: str, kind: str) -> Path:
        """calls/<task>/<attempt>-<step>.<kind>.md (kind: prompt | reply)."""
        return self.root / "calls" / task_id / f"{attempt}-{step}.{kind}.md"

    def candidate_file(self, task_id: str, attempt: int) -> Path | None:
        """attempts/<task>/<n>.<suffix> (the output's: .py, .go, .mjs), or the .rejected.txt
        saying why there was no code."""
        folder = self.root / "attempts" / task_id
        code = sorted(p for p in folder.glob(f"{attempt}.*") if p.suffixes[:1] != [".rejected"])
        for path in (*code, folder / f"{attempt}.rejected.txt"):
            if path.is_file():
                return path
        return None

    def task_ids(self) -> list[str]:
        """Tasks in summary order, else the ones with files in the run folder."""
        summary = self.summary()
        if summary is not None:
            return [t["id"] for t in summary.get("tasks", [])]
        return sorted(p.name for p in (self.root / "attempts").glob("*") if p.is_dir())

    def attempts(self, task_id: str) -> list[StoredAttempt]:
        """The task's recorded attempts (record, code, test result) from the run store."""
        with self.store() as store:
            return store.load_attempts(self.run_id, task_id)

    @contextmanager
    def store(self) -> Iterator[Store]:
        path = self.root.parent / "harness.db"
        if not path.is_file():
            raise BadInput(f"{path}: no run store beside {self.root}")
        try:  # read only: a morning command never writes the store or waits on a night
            store = Store.open_readonly(path)
        except StoreError as exc:
            raise BadInput(str(exc)) from exc
        try:
            yield store
        finally:
            store.close()
