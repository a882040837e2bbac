"""summary.json read back: schema 1 checked field by field, so a damaged file is a clear error."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from harness.results import JudgeOutcome, RunStatus, SeedSource, StopCause, TaskStatus

__all__ = ["SCHEMA", "SummaryError", "read_summary"]

SCHEMA = 1
Count = Annotated[int, Field(strict=True, ge=0)]
Usd = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]


def _iso(value: str) -> str:
    """A time the renderers can read back: ISO 8601 with its UTC offset."""
    try:
        stamp = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 time") from None
    if stamp.tzinfo is None:
        raise ValueError(f"{value!r} has no UTC offset")
    return value


Stamp = Annotated[str, Field(strict=True), AfterValidator(_iso)]


class SummaryError(ValueError):
    """summary.json cannot be read as schema 1; the message says where and what to do."""


class _Open(BaseModel):
    """Fields the renderer reads are checked; others (added later, optional) are kept."""

    model_config = ConfigDict(extra="allow")


class _Score(_Open):
    passed: Count = 0
    total: Count = 0


class _Seed(_Score):
    source: SeedSource
    run_id: str | None = None


class _Attempt(_Open):
    n: Count
    kind: str
    passed: Count
    total: Count
    cost_usd: Usd
    regressed: bool
    extraction_error: str | None
    tier: str | None = None
    tampered: bool | None = None
    test_error: str | None = None


class _Task(_Open):
    id: str
    status: TaskStatus
    reason: str
    best_attempt: Count | None
    passed: Count
    total: Count
    cost_usd: Usd
    output: str | None
    attempts: list[_Attempt]
    cause: StopCause | None = None
    seed: _Seed | None = None
    skipped: Count | None = None
    hidden: _Score | None = None
    warnings: list[str] = []
    judge: JudgeOutcome | None = None


class _Budget(_Open):
    cap_usd: Usd | None
    spent_usd: Usd


class _Batch(_Open):
    submitted: Count
    succeeded: Count
    fell_back: Count
    saved_usd: float = Field(strict=True, allow_inf_nan=False)


class _Summary(_Open):
    schema_: int = Field(alias="schema", strict=True)
    run_id: str
    started_at: Stamp
    finished_at: Stamp
    status: RunStatus
    provider: str
    budget: _Budget
    tasks: list[_Task]
    notes: list[str] = []
    batch: _Batch | None = None


def _constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _explain(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the document"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg'].lower()}{more}"


def read_summary(path: Path) -> dict[str, Any]:
    """The summary document at `path`, or SummaryError saying what is wrong with it.

    Raises FileNotFoundError when there is no file (a run still going, or killed).
    """
    damaged = f"{path} is damaged, not a schema-{SCHEMA} summary"
    fix = (
        f"rewrite it from the run store with `harness run TASKS --run-dir DIR --resume "
        f"{Path(path).parent.name}` (the finished tasks make no new calls)"
    )
    try:
        data = json.loads(Path(path).read_bytes(), parse_constant=_constant)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise FileNotFoundError(str(path)) from exc
    except OSError as exc:
        raise SummaryError(f"{path} cannot be read ({exc.strerror})") from exc
    except RecursionError:
        raise SummaryError(f"{damaged} (nested too deeply); {fix}") from None
    except ValueError as exc:  # JSON syntax, not UTF-8, NaN or Infinity
        raise SummaryError(f"{damaged} ({exc}); {fix}") from exc
    schema = data.get("schema") if isinstance(data, dict) else None
    if isinstance(schema, int) and schema > SCHEMA:
        raise SummaryError(
            f"{path} is schema {schema}, written by a newer harness; this one reads schema "
            f"{SCHEMA}: upgrade the harness to read it"
        )
    try:
        _Summary.model_validate(data)
    except ValidationError as exc:
        raise SummaryError(f"{damaged} ({_explain(exc)}); {fix}") from None
    if data["schema"] != SCHEMA:
        raise SummaryError(f"{damaged} (schema: {data['schema']!r}); {fix}")
    return data
