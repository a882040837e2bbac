"""The run store's schema, as an append-only list of migrations."""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

# Migration i brings the schema from user_version i to i + 1; append, never edit.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT,"
        " status TEXT, provider TEXT NOT NULL, cap_usd TEXT, args TEXT NOT NULL,"
        " resumes INTEGER NOT NULL DEFAULT 0)",
        "CREATE TABLE calls (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs,"
        " task_id TEXT NOT NULL, attempt INTEGER NOT NULL, step TEXT NOT NULL, tier TEXT NOT NULL,"
        " provider TEXT NOT NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL,"
        " cache_write_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL,"
        " output_tokens INTEGER NOT NULL, stop_reason TEXT NOT NULL, latency_s REAL NOT NULL,"
        " retries INTEGER NOT NULL, cost_usd TEXT NOT NULL, recorded_at TEXT NOT NULL)",
        "CREATE INDEX calls_by_task ON calls (run_id, task_id)",
        "CREATE TABLE attempts (run_id TEXT NOT NULL REFERENCES runs, task_id TEXT NOT NULL,"
        " n INTEGER NOT NULL, kind TEXT NOT NULL, passed INTEGER NOT NULL, total INTEGER NOT NULL,"
        " regressed INTEGER NOT NULL, extraction_error TEXT, cost_usd TEXT NOT NULL,"
        " record TEXT NOT NULL, code TEXT, result TEXT, recorded_at TEXT NOT NULL,"
        " PRIMARY KEY (run_id, task_id, n))",
        "CREATE INDEX attempts_by_task ON attempts (task_id)",
        "CREATE TABLE tasks (run_id TEXT NOT NULL REFERENCES runs, task_id TEXT NOT NULL,"
        " status TEXT NOT NULL, digest TEXT NOT NULL, result TEXT NOT NULL,"
        " recorded_at TEXT NOT NULL, PRIMARY KEY (run_id, task_id))",
        "CREATE INDEX tasks_by_inputs ON tasks (task_id, digest, status)",
    ),
    (  # a reply received is kept with its prompt's digest, so a resume reuses it, not re-buys
        "ALTER TABLE calls ADD COLUMN prompt_sha256 TEXT",
        "ALTER TABLE calls ADD COLUMN reply TEXT",
        "ALTER TABLE calls ADD COLUMN detail TEXT",
        "CREATE INDEX calls_by_step ON calls (run_id, task_id, attempt, step)",
    ),
    (  # batch mode: a batch and its entries are recorded before the first poll (resume re-attaches)
        "CREATE TABLE batches (run_id TEXT NOT NULL REFERENCES runs, batch_id TEXT NOT NULL,"
        " provider TEXT NOT NULL, model TEXT NOT NULL, display_name TEXT NOT NULL,"
        " created_at REAL NOT NULL, ended_at REAL, canceled INTEGER NOT NULL DEFAULT 0,"
        " PRIMARY KEY (run_id, batch_id))",
        "CREATE TABLE batch_entries (run_id TEXT NOT NULL, batch_id TEXT NOT NULL,"
        " custom_id TEXT NOT NULL, task_id TEXT NOT NULL, prompt_sha256 TEXT NOT NULL,"
        " outcome TEXT, latency_s REAL, list_usd TEXT, cost_usd TEXT,"
        " PRIMARY KEY (run_id, batch_id, custom_id))",
    ),
    (  # context tools: each round's results, kept before the next request (resume, replay)
        "CREATE TABLE tool_results (run_id TEXT NOT NULL, task_id TEXT NOT NULL,"
        " attempt INTEGER NOT NULL, step TEXT NOT NULL, results TEXT NOT NULL,"
        " PRIMARY KEY (run_id, task_id, attempt, step))",
    ),
    (  # context tools: what each task's rounds read (a path's fingerprint), for carry-over
        "CREATE TABLE tool_reads (run_id TEXT NOT NULL, task_id TEXT NOT NULL,"
        " path TEXT NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (run_id, task_id, path))",
    ),
)
