"""`harness export prefs`: preference pairs from a night's attempts, for fine-tuning.

Per task with contrast: the prompt messages of the best attempt's step, its reply as the
preferred output and a worse attempt's as the non-preferred one, in the widely used
preference format ({"input": {"messages": [...]}, "preferred_output": [...],
"non_preferred_output": [...]}); a sidecar `<out>_meta.jsonl` holds, line for line, where
each pair came from, the pass counts and which tests the two replies differ on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import BadInput
from harness.extract import extract_code
from harness.fsio import check_target, write_atomic
from harness.llm import RecordedCall
from harness.results import Outcome, TestResult
from harness.store import RecordingError, RunFolder, StoredAttempt, read_call
from harness.tracker import score

__all__ = ["Export", "export_prefs", "meta_path"]


@dataclass(frozen=True)
class _Reply:
    """A tested attempt with the call whose reply became its code."""

    attempt: StoredAttempt
    call: RecordedCall

    @property
    def result(self) -> TestResult:
        assert self.attempt.result is not None
        return self.attempt.result

    def rank(self) -> tuple[Any, ...]:
        """Better first: the tracker's score (passes, fewer errors, fewer failures), then cost."""
        return (score(self.result), -self.attempt.record.cost_usd, -self.attempt.record.n)


@dataclass(frozen=True)
class Export:
    pairs: int
    skipped: int  # tasks without contrast (one tested attempt, or all equally good)
    out: Path
    meta: Path


def meta_path(out: Path) -> Path:
    """prefs.jsonl → prefs_meta.jsonl."""
    return out.with_name(f"{out.stem}_meta.jsonl")


def _source(run: RunFolder, stored: StoredAttempt, task_id: str) -> RecordedCall | None:
    """The call whose reply the attempt's code came from: a fix, else the rewrite when it
    replaced the draft, else the write."""
    n = stored.record.n
    steps = ("fix",) if stored.record.kind == "fix" else ("rewrite", "write")
    calls = [c for s in steps if (c := read_call(run.root, task_id, n, s)) is not None]
    for call in calls:
        if extract_code(call.completion.text).code == stored.code:
            return call
    return calls[-1] if calls else None


def _replies(run: RunFolder, task_id: str) -> list[_Reply]:
    """The task's tested, untampered attempts that have their call on record."""
    found = []
    for stored in run.attempts(task_id):
        if stored.code is None or stored.result is None or stored.result.tampered:
            continue
        call = _source(run, stored, task_id)
        if call is not None:
            found.append(_Reply(stored, call))
    return found


def _pair(replies: list[_Reply]) -> tuple[_Reply, _Reply] | None:
    """The best reply, and a worse one: preferably to the very same prompt, then a reverted
    regression, then the worst."""
    if not replies:
        return None
    best = max(replies, key=_Reply.rank)
    worse = [r for r in replies if score(r.result) < score(best.result)]
    if not worse:
        return None

    def unlike(r: _Reply) -> tuple[Any, ...]:
        worst = tuple(-x for x in score(r.result))
        return (_same_prompt(best, r), r.attempt.record.regressed, worst)

    return best, max(worse, key=unlike)


def _same_prompt(a: _Reply, b: _Reply) -> bool:
    return a.call.key.prompt_sha256 == b.call.key.prompt_sha256


def _messages(call: RecordedCall) -> list[dict[str, str]]:
    prompt = call.prompt
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.text}]


def _side(reply: _Reply) -> dict[str, Any]:
    record, result = reply.attempt.record, reply.result
    return {
        "attempt": record.n,
        "step": reply.call.key.step,
        "passed": result.passed,
        "failed": result.failed,
        "errors": result.errors,
        "total": result.total,
        "cost_usd": float(record.cost_usd),
        "regressed": record.regressed,
    }


def _passing(result: TestResult) -> set[str]:
    return {c.nodeid for c in result.cases if c.outcome is Outcome.PASSED}


def _lines(run: RunFolder, task_id: str, good: _Reply, bad: _Reply) -> tuple[str, str]:
    pair = {
        "input": {"messages": _messages(good.call)},
        "preferred_output": [{"role": "assistant", "content": good.call.completion.text}],
        "non_preferred_output": [{"role": "assistant", "content": bad.call.completion.text}],
    }
    won, lost = _passing(good.result), _passing(bad.result)
    meta = {
        "run_id": run.run_id,
        "task_id": task_id,
        "same_prompt": _same_prompt(good, bad),
        "preferred": _side(good),
        "non_preferred": _side(bad),
        "delta_passed": good.result.passed - bad.result.passed,
        "tests_only_preferred_passes": sorted(won - lost),
        "tests_only_non_preferred_passes": sorted(lost - won),
    }
    return json.dumps(pair, ensure_ascii=False), json.dumps(meta, ensure_ascii=False)


def _inputs(runs: list[RunFolder]) -> dict[Path, str]:
    """What the export reads, and each run's task list: never a place to write."""
    found: dict[Path, str] = {}
    for run in runs:
        found[run.root.parent / "harness.db"] = "a run store"
        found[run.root / "summary.json"] = f"run {run.run_id}'s summary"
        with run.store() as store:
            info = store.run_info(run.run_id)
        if info is not None and info.params.tasks is not None:
            found[info.params.tasks] = f"the task list of run {run.run_id}"
    return found


def check_out(runs: list[RunFolder], out: Path, *, force: bool) -> None:
    """--out and its sidecar pass the one write check; an existing file only with --force."""
    inputs = _inputs(runs)
    for path in (out, meta_path(out)):
        problem = check_target(path, inputs=inputs, replace=force)
        if problem:
            raise BadInput(f"--out: {problem}")


def export_prefs(
    runs: Iterable[RunFolder], out: Path, *, same_prompt: bool = False, force: bool = False
) -> Export:
    """Write the pairs of every task of `runs` to `out` and their sidecar; `same_prompt`
    keeps only pairs whose two replies answer the very same prompt; an existing `out` is
    replaced only with `force`."""
    runs = list(runs)
    out = Path(out)
    check_out(runs, out, force=force)
    pairs: list[str] = []
    metas: list[str] = []
    skipped = 0
    for run in runs:
        for task_id in run.task_ids():
            try:
                found = _pair(_replies(run, task_id))
            except RecordingError as exc:
                raise BadInput(str(exc)) from exc
            if found is None or (same_prompt and not _same_prompt(*found)):
                skipped += 1
                continue
            pair, meta = _lines(run, task_id, *found)
            pairs.append(pair)
            metas.append(meta)
    write_atomic(out, "".join(f"{line}\n" for line in pairs))
    write_atomic(meta_path(out), "".join(f"{line}\n" for line in metas))
    return Export(len(pairs), skipped, out, meta_path(out))
