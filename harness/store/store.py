"""The run store: runs, tasks, attempts and calls, each written as it finishes.

Every method is one short transaction (see _db for durability and threads); rows are
parsed back through pydantic, exactly.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from harness.llm import CallRequest, Completion, RecordedReply
from harness.results import AttemptRecord, RunStatus, TaskResult, TaskStatus, TestResult, Totals
from harness.store.batches import BatchLog
from harness.store.calls import IN_FLIGHT, RunCallLog, close_call, open_call, recorded_reply
from harness.store.db import Db
from harness.store.toolresults import RunToolLog
from harness.tracker import score

__all__ = ["RunCallLog", "RunInfo", "RunParams", "Store", "StoredAttempt"]

# The tables whose rows belong to one run (a run_id column), children of `runs`.
_RUN_TABLES = (
    "calls",
    "attempts",
    "tasks",
    "batches",
    "batch_entries",
    "tool_results",
    "tool_reads",
)
_RECORD = TypeAdapter(AttemptRecord)
_RESULT = TypeAdapter(TestResult)
_TASK = TypeAdapter(TaskResult)


@dataclass(frozen=True)
class StoredAttempt:
    """A finished attempt as recorded: the record, its candidate code and its test result."""

    run_id: str
    record: AttemptRecord
    code: str | None
    result: TestResult | None


@dataclass(frozen=True)
class RunParams:
    """What a run was started with that a resume must match or keep (the `args` column)."""

    tasks: Path | None = None  # the task list, resolved
    seed: int | None = None  # the simulator's seed
    only: tuple[str, ...] | None = None  # --only, if given


_PARAMS = TypeAdapter(RunParams)


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    status: RunStatus | None  # None: still running, or killed before it finished
    provider: str
    cap_usd: Decimal | None
    params: RunParams
    resumes: int


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


def _dumps(adapter: TypeAdapter[Any], value: Any) -> str | None:
    return None if value is None else adapter.dump_json(value).decode()


def _loads(adapter: TypeAdapter[Any], text: str | None) -> Any:
    return None if text is None else adapter.validate_json(text)


class Store:
    """The run store of one run directory. Open with `Store.open(path)`."""

    def __init__(self, db: Db) -> None:
        self._db = db

    @classmethod
    def open(cls, path: Path) -> Store:
        """Open (creating and migrating as needed) the store at `path`."""
        return cls(Db.open(path))

    @classmethod
    def open_readonly(cls, path: Path) -> Store:
        """Open the existing store at `path` for reading only (Db.open_readonly)."""
        return cls(Db.open_readonly(path))

    def close(self) -> None:
        self._db.close()

    def begin_run(
        self,
        run_id: str,
        started_at: dt.datetime,
        provider: str,
        cap_usd: Decimal | None,
        params: RunParams,
    ) -> None:
        """Record a run's start; on an existing run_id (a resume) reopen it, keeping its start."""
        cap = None if cap_usd is None else str(cap_usd)
        args = json.dumps(asdict(params), default=str)
        with self._db.tx() as conn:
            conn.execute(
                "INSERT INTO runs (run_id, started_at, provider, cap_usd, args) VALUES (?,?,?,?,?)"
                " ON CONFLICT (run_id) DO UPDATE SET finished_at=NULL, status=NULL,"
                " cap_usd=excluded.cap_usd, args=excluded.args, resumes=resumes+1",
                (run_id, started_at.isoformat(), provider, cap, args),
            )

    def finish_run(self, run_id: str, status: RunStatus, finished_at: dt.datetime) -> None:
        with self._db.tx() as conn:
            conn.execute(
                "UPDATE runs SET status=?, finished_at=? WHERE run_id=?",
                (RunStatus(status).value, finished_at.isoformat(), run_id),
            )

    def latest_run(self) -> str | None:
        """The run begun most recently (insertion order: wall clocks and DST cannot reorder it)."""
        rows = self._db.read("SELECT run_id FROM runs ORDER BY rowid DESC LIMIT 1")
        return rows[0][0] if rows else None

    def run_info(self, run_id: str) -> RunInfo | None:
        rows = self._db.read(
            "SELECT started_at, finished_at, status, provider, cap_usd, args, resumes"
            " FROM runs WHERE run_id=?",
            (run_id,),
        )
        if not rows:
            return None
        started, finished, status, provider, cap, args, resumes = rows[0]
        when = dt.datetime.fromisoformat
        status = RunStatus(status) if status else None
        cap = Decimal(cap) if cap is not None else None
        finished = when(finished) if finished else None
        params = _PARAMS.validate_json(args)
        return RunInfo(run_id, when(started), finished, status, provider, cap, params, resumes)

    def open_call(self, run_id: str, request: CallRequest, reserved_usd: Decimal) -> int:
        """A call about to be sent, counted at its reservation until closed (see _calls)."""
        return open_call(self._db, run_id, request, reserved_usd)

    def close_call(self, call_id: int, completion: Completion, cost_usd: Decimal) -> None:
        """A call answered or failed: its real cost and its reply replace the reservation."""
        close_call(self._db, call_id, completion, cost_usd)

    def recorded_reply(self, run_id: str, request: CallRequest) -> RecordedReply | None:
        """The reply this run already received (and paid for) to this very request."""
        return recorded_reply(self._db, run_id, request)

    def call_log(self, run_id: str) -> RunCallLog:
        """An adapter with the `harness.calls.CallLog` signature, bound to one run."""
        return RunCallLog(self._db, run_id)

    def tool_log(self, run_id: str, root: Path) -> RunToolLog:
        """The run's context tool results (store rows, and files under `root`)."""
        return RunToolLog(self._db, run_id, root)

    def batch_log(self, run_id: str) -> BatchLog:
        """The run's batches and their entries (batch mode), bound to one run."""
        return BatchLog(self._db, run_id)

    def held(self, run_id: str) -> Decimal:
        """The reservations of the run's calls still open (sent, not yet answered): money
        held, spent only if the vendor bills it; a resume counts them as spent."""
        sql = "SELECT cost_usd FROM calls WHERE run_id=? AND stop_reason=?"
        rows = self._db.read(sql, (run_id, IN_FLIGHT))
        return sum((Decimal(c) for (c,) in rows), Decimal(0))

    def spent(self, run_id: str, task_id: str | None = None) -> Decimal:
        """Exact sum of recorded call costs for the run (or one of its tasks)."""
        sql, params = "SELECT cost_usd FROM calls WHERE run_id=?", (run_id,)
        if task_id is not None:
            sql, params = sql + " AND task_id=?", (run_id, task_id)
        return sum((Decimal(c) for (c,) in self._db.read(sql, params)), Decimal(0))

    def record_attempt(
        self,
        run_id: str,
        task_id: str,
        record: AttemptRecord,
        code: str | None,
        result: TestResult | None,
    ) -> None:
        """A finished attempt (after its tests ran). Recording attempt n again replaces it."""
        columns = (record.n, record.kind, record.passed, record.total, int(record.regressed))
        extra = (record.extraction_error, str(record.cost_usd), _dumps(_RECORD, record))
        row = (run_id, task_id, *columns, *extra, code, _dumps(_RESULT, result), _now())
        self._db.insert("INSERT OR REPLACE", "attempts", row)

    def load_attempts(self, run_id: str, task_id: str) -> list[StoredAttempt]:
        """The task's finished attempts in this run, in attempt order (what --resume replays)."""
        rows = self._db.read(
            "SELECT run_id, record, code, result FROM attempts WHERE run_id=? AND task_id=?"
            " ORDER BY n",
            (run_id, task_id),
        )
        return [_attempt(row) for row in rows]

    def best_earlier(
        self, task_id: str, exclude_run: str | None = None, provider: str | None = None
    ) -> StoredAttempt | None:
        """The best candidate of this task in any other run, by `tracker.score`.

        Only attempts with code and a test result count; tampered ones never do. Ties go to
        the newer run (tested against the newer tests), then to the earlier attempt. With
        `provider`, only runs made with it count (a simulated night never seeds a live one).
        """
        rows = self._db.read(
            "SELECT a.run_id, a.record, a.code, a.result, r.rowid, a.n FROM attempts a"
            " JOIN runs r ON r.run_id = a.run_id WHERE a.task_id=? AND a.run_id IS NOT ?"
            " AND a.code IS NOT NULL AND a.result IS NOT NULL AND (? IS NULL OR r.provider=?)",
            (task_id, exclude_run, provider, provider),
        )
        ranked = [(_attempt(row[:4]), row[4], row[5]) for row in rows]
        ranked = [r for r in ranked if r[0].result is not None and not r[0].result.tampered]
        if not ranked:
            return None
        return max(ranked, key=lambda r: (score(r[0].result), r[1], -r[2]))[0]

    def record_task(self, run_id: str, result: TaskResult, digest: str) -> None:
        """A task's final result with the digest of the inputs it ran on (replaces on resume)."""
        row = (run_id, result.id, result.status.value, digest, _dumps(_TASK, result), _now())
        self._db.insert("INSERT OR REPLACE", "tasks", row)

    def task_results(self, run_id: str) -> dict[str, TaskResult]:
        rows = self._db.read(
            "SELECT task_id, result FROM tasks WHERE run_id=? ORDER BY rowid", (run_id,)
        )
        return {task_id: _loads(_TASK, text) for task_id, text in rows}

    def passed_before(self, task_id: str, digest: str) -> str | None:
        """The newest run in which this task passed on exactly these inputs, if any."""
        rows = self._db.read(
            "SELECT t.run_id FROM tasks t JOIN runs r ON r.run_id = t.run_id"
            " WHERE t.task_id=? AND t.digest=? AND t.status=? ORDER BY r.rowid DESC LIMIT 1",
            (task_id, digest, TaskStatus.PASSED.value),
        )
        return rows[0][0] if rows else None

    def files_read(self, run_id: str, task_id: str) -> dict[str, str]:
        """What the task's context tools read in that run: path → fingerprint when read."""
        rows = self._db.read(
            "SELECT path, fingerprint FROM tool_reads WHERE run_id=? AND task_id=?",
            (run_id, task_id),
        )
        return dict(rows)

    def adopt(self, run: RunInfo, sources: Sequence[tuple[Path, str]]) -> None:
        """Record `run` as the union of runs kept in other stores (each source: a store's path
        and a run id in it), every row under `run.run_id`, replacing what this store held for
        that run, in one transaction: a distributed night's task runs gathered into its run
        dir's store (harness.scale.gather), so every reader of a run reads it as one. Calls
        are numbered anew; every other row is copied as it is."""
        copied: list[tuple[str, list[str], list[tuple[Any, ...]]]] = []
        for path, source_id in sources:
            source = Db.open_readonly(path)
            try:
                for table in _RUN_TABLES:
                    cols = [c for c in source.columns(table) if c != "id"]
                    sql = f"SELECT {','.join(cols)} FROM {table} WHERE run_id=? ORDER BY rowid"
                    copied.append((table, cols, source.read(sql, (source_id,))))
            finally:
                source.close()
        when = None if run.finished_at is None else run.finished_at.isoformat()
        with self._db.tx() as conn:
            for table in _RUN_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE run_id=?", (run.run_id,))
            conn.execute("DELETE FROM runs WHERE run_id=?", (run.run_id,))
            conn.execute(
                "INSERT INTO runs (run_id, started_at, finished_at, status, provider, cap_usd,"
                " args, resumes) VALUES (?,?,?,?,?,?,?,?)",
                (
                    run.run_id,
                    run.started_at.isoformat(),
                    when,
                    None if run.status is None else RunStatus(run.status).value,
                    run.provider,
                    None if run.cap_usd is None else str(run.cap_usd),
                    json.dumps(asdict(run.params), default=str),
                    run.resumes,
                ),
            )
            for table, cols, rows in copied:
                at = cols.index("run_id")
                marks = ",".join("?" * len(cols))
                conn.executemany(
                    f"INSERT INTO {table} ({','.join(cols)}) VALUES ({marks})",
                    ((*row[:at], run.run_id, *row[at + 1 :]) for row in rows),
                )

    def totals(self) -> Totals:
        """Counts over every run in the store: what makes the *_total metrics real counters."""
        runs = dict(
            self._db.read("SELECT coalesce(status, 'unfinished'), count(*) FROM runs GROUP BY 1")
        )
        calls, retries = self._db.read("SELECT count(*), coalesce(sum(retries), 0) FROM calls")[0]
        failures, reverts = self._db.read(
            "SELECT count(extraction_error), coalesce(sum(regressed), 0) FROM attempts"
        )[0]
        judged = dict(
            self._db.read(
                "SELECT json_extract(result, '$.judge'), count(*) FROM tasks"
                " WHERE json_extract(result, '$.judge') IS NOT NULL GROUP BY 1"
            )
        )
        return Totals(runs, calls, retries, failures, reverts, judged)


def _attempt(row: tuple[Any, ...]) -> StoredAttempt:
    run_id, record, code, result = row
    return StoredAttempt(run_id, _loads(_RECORD, record), code, _loads(_RESULT, result))
