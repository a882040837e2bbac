"""What a task carries into this run: a resumed run's finished work, and earlier nights'.

A task that passed on the same inputs, still has that very file at its output, and whose
context tools read nothing that has changed since is up to date; a resumed run keeps its
finished attempts; anything else starts from the best candidate seen before (an earlier
night's, or the file at the output path), re-tested now.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import structlog

from harness.context import changed
from harness.pipeline import Prior
from harness.results import (
    CUT_SHORT,
    Counts,
    Seed,
    SeedSource,
    StopCause,
    TaskResult,
    TaskStatus,
    sha256,
)
from harness.runner.prepared import Run
from harness.tasks import TaskSpec
from harness.tracker import Best, score

__all__ = ["FILTERED", "already_done", "prior", "skipped", "starts_with_write"]

log = structlog.get_logger()


def skipped(spec: TaskSpec, reason: str, cause: StopCause) -> TaskResult:
    return TaskResult(id=spec.id, status=TaskStatus.SKIPPED, reason=reason, cause=cause)


FILTERED = "filtered: not selected by --only"
_FINAL = (TaskStatus.PASSED, TaskStatus.PARTIAL, TaskStatus.FAILED, TaskStatus.GUARDRAIL)


def _final(result: TaskResult) -> bool:
    """A recorded result a resume keeps: it ended on its own, not because the run stopped."""
    if result.cause in CUT_SHORT:
        return False
    return result.status in _FINAL or result.cause is StopCause.UP_TO_DATE


def _file_sha256(path: Path) -> str | None:
    try:
        return sha256(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def already_done(run: Run, spec: TaskSpec) -> TaskResult | None:
    """A result needing no work: finished earlier in this run, or up to date from a past night."""
    done = (
        run.parts.store.task_results(run.parts.rundir.run_id).get(spec.id)
        if run.plan.resumed
        else None
    )
    if done is not None and _final(done):
        return done
    passed_in = (
        None
        if run.plan.rerun
        else run.parts.store.passed_before(spec.id, run.plan.digests[spec.id])
    )
    if passed_in is None or passed_in == run.parts.rundir.run_id:
        return None
    earlier = run.parts.store.task_results(passed_in)[spec.id]
    if earlier.output_sha256 is None or earlier.output_sha256 != _file_sha256(spec.output):
        return None
    moved = changed(run.parts.store.files_read(passed_in, spec.id))
    if moved is not None:
        log.info("context_changed", task_id=spec.id, path=moved, passed_in=passed_in)
        return None
    return replace(
        earlier,
        status=TaskStatus.SKIPPED,
        reason=f"up to date: passed in run {passed_in} with the same inputs",
        cause=StopCause.UP_TO_DATE,
        cost_usd=Decimal(0),
        attempts=(),
        seed=None,
    )


def prior(run: Run, spec: TaskSpec) -> Prior:
    """This run's finished attempts (resume) and the best candidate from before this run."""
    run_id = run.parts.rundir.run_id
    attempts = tuple(run.parts.store.load_attempts(run_id, spec.id)) if run.plan.resumed else ()
    ours = {sha256(a.code) for a in attempts if a.code is not None}
    return Prior(attempts, _seed(run, spec, ours))


def _seed(run: Run, spec: TaskSpec, ours: set[str]) -> Best | None:
    """The best of an earlier night's best and the file already at the output path, re-tested
    now (no paid call), so a night never ships worse than what it started with.

    A file at the output path that one of this run's own attempts wrote (a resume after the
    task shipped) is not a seed: replaying that attempt restores it under its own number.
    `--rerun` asks for a fresh port, so it starts from nothing.
    """
    if run.plan.rerun:
        return None
    earlier = run.parts.store.best_earlier(
        spec.id, exclude_run=run.parts.rundir.run_id, provider=run.plan.provider
    )
    sources = [({"from_run": earlier.run_id}, earlier.code)] if earlier is not None else []
    if spec.output.is_file():
        text = spec.output.read_text(encoding="utf-8", errors="replace")
        if sha256(text) not in ours:
            sources.append(({"from_output": str(spec.output)}, text))
    seeds = [(origin, best) for origin, code in sources if (best := _retest(run, spec, code))]
    if not seeds:
        return None
    origin, best = max(seeds, key=lambda s: score(s[1].result))  # ties keep the earlier night
    log.info("task_seeded", **origin, passed=best.result.passed, total=best.result.total)
    return replace(best, seed=_described(origin, best))


def _described(origin: dict[str, str], best: Best) -> Seed:
    """Where the seed came from, in words the summary can trust: a file already at the output
    path is not something an earlier run of ours carried over."""
    source = SeedSource.EARLIER_RUN if "from_run" in origin else SeedSource.OUTPUT
    return Seed(source, origin.get("from_run"), **Counts.of(best.result).fields())


def _retest(run: Run, spec: TaskSpec, code: str) -> Best | None:
    """A candidate from before this run, kept only if it is clean and still passes something."""
    if run.parts.env.check_code(code, spec.language):
        return None
    result = run.parts.env.run_tests(spec, code)
    return None if result.tampered or result.passed == 0 else Best(0, code, result)


def starts_with_write(run: Run, spec: TaskSpec) -> bool:
    """Will attempt 1 be a write from nothing (what batch mode submits)? Not for a task done
    before, one this run already began, or one with an earlier candidate to start from (its
    attempt 1 is a fix). Decided without re-testing: a seed that fails its re-test makes
    that task write interactively."""
    if already_done(run, spec) is not None:
        return False
    if run.plan.resumed and run.parts.store.load_attempts(run.parts.rundir.run_id, spec.id):
        return False
    if run.plan.rerun:
        return True
    earlier = run.parts.store.best_earlier(
        spec.id, exclude_run=run.parts.rundir.run_id, provider=run.plan.provider
    )
    return earlier is None and not spec.output.is_file()
