"""The run directory: attempts, prompts and replies, the working copy, and the `latest` link."""

from __future__ import annotations

import datetime as dt
import os
import secrets
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from harness.fsio import write_atomic, write_log
from harness.llm import CallRequest, Completion
from harness.store.callfiles import call_record, prompt_file
from harness.tasks import TaskSpec

__all__ = ["RunDir", "TaskFiles", "new_run_id", "resolve_run"]


def new_run_id(now: dt.datetime | None = None) -> str:
    """Sortable and unique: local start time plus a short random suffix."""
    now = now or dt.datetime.now().astimezone()
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def resolve_run(path: Path) -> Path:
    """A run folder from either the folder itself or a run dir holding a `latest` link."""
    path = Path(path)
    if (path / "summary.json").is_file() or (path / "events.jsonl").is_file():
        return path
    latest = path / "latest"
    if latest.is_dir():
        return latest.resolve()
    if latest.is_symlink() or latest.exists():  # dangling, a loop, or not a link at all
        raise FileNotFoundError(
            f"{latest} does not lead to a run folder; pass a run folder itself "
            f"(harness summary {path}/RUN_ID), or remove {latest}: the next run recreates it"
        )
    raise FileNotFoundError(f"no run found at {path}: pass a run folder or a --run-dir with runs")


@dataclass(frozen=True)
class TaskFiles:
    """One task's files inside the run: every candidate (named with the output's suffix:
    `3.py`, `3.go`), and the working copy."""

    root: Path
    working: Path
    suffix: str = ".py"

    def save_candidate(self, n: int, code: str | None, reason: str | None) -> None:
        if code is not None:
            write_log(self.root / f"{n}{self.suffix}", code)
        else:
            write_log(self.root / f"{n}.rejected.txt", f"{reason}\n")

    def write_working(self, code: str) -> None:
        write_atomic(self.working, code)

    def read_working(self) -> str:
        return self.working.read_text()


class RunDir:
    """`<run-dir>/<run_id>/`, laid out as ARCHITECTURE.md's run-directory contract says."""

    def __init__(self, base: Path, run_id: str) -> None:
        self.base = Path(base)
        self.run_id = run_id
        self.root = self.base / run_id
        self.root.mkdir(parents=True, exist_ok=True)

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    def task_files(self, spec: TaskSpec) -> TaskFiles:
        return TaskFiles(
            self.root / "attempts" / spec.id,
            self.root / "work" / spec.id / spec.output.name,
            spec.output.suffix or ".py",
        )

    def open_call(self, request: CallRequest, reserved_usd: Decimal) -> CallRequest:
        return request

    def close_call(self, handle: CallRequest, completion: Completion, cost_usd: Decimal) -> None:
        self.record_call(handle, completion, cost_usd)

    def recorded(self, request: CallRequest) -> None:
        """The run folder keeps replies for people; the store is what a resume reuses."""
        return None

    def record_call(self, request: CallRequest, completion: Completion, cost_usd: Decimal) -> None:
        """Prompts and replies go to files, never to the log; call.json, written last, is
        what a replay reads them back by (every try rewrites them: the last one stands)."""
        folder = self.root / "calls" / request.task_id
        stem = f"{request.attempt}-{request.step}"
        write_log(folder / f"{stem}.prompt.md", prompt_file(request.prompt))
        write_log(folder / f"{stem}.reply.md", completion.text or "")
        write_log(folder / f"{stem}.call.json", call_record(request, completion, cost_usd))

    def point_latest(self) -> None:
        """Atomically repoint `<run-dir>/latest` at this run."""
        link = self.base / "latest"
        tmp = self.base / f".latest.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(self.run_id)
        os.replace(tmp, link)
