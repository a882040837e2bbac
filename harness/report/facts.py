"""What the morning summary says about a run, derived once from summary.json and worded once,
so summary.md and summary.html can never disagree.

The words are chosen so that none misleads: "shipped" only when a file was written (`output`
is set); a candidate seeded from the file already at the output path is never "carried over"
(only an earlier night's best is); an ordinary revert is the ratchet working, counted in the
totals, while a task that ships less than it once reached needs a human.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from harness.results import NEEDS_A_HUMAN, SeedSource, StopCause, TaskStatus, money

__all__ = [
    "activity",
    "attempt_cell",
    "attention",
    "batch_words",
    "best_cell",
    "best_note",
    "duration",
    "escalated",
    "passed_cell",
    "seed_words",
    "status_counts",
]

Task = Mapping[str, Any]


def duration(data: Mapping[str, Any]) -> str:
    start = dt.datetime.fromisoformat(data["started_at"])
    seconds = int((dt.datetime.fromisoformat(data["finished_at"]) - start).total_seconds())
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m{seconds % 60:02d}s"


def status_counts(tasks: list[Task]) -> str:
    counts = Counter(t["status"] for t in tasks)
    text = f"{counts['passed']} passed, {counts['partial']} partial, {counts['failed']} failed"
    return text + "".join(
        f", {counts[s]} {s}" for s in ("error", "guardrail", "skipped") if counts[s]
    )


def escalated(attempts: list[Mapping[str, Any]]) -> frozenset[int]:
    """Fixes routed to another tier than the task's first fix: the router's escalation."""
    fixes = [a for a in attempts if a["kind"] == "fix" and a.get("tier")]
    base = fixes[0]["tier"] if fixes else None
    return frozenset(a["n"] for a in fixes if a["tier"] != base)


def activity(tasks: list[Task]) -> str:
    """The night's work in one line: attempts, escalations, ratchet reverts, seeds."""
    attempts = [a for t in tasks for a in t["attempts"]]
    seeds = Counter(t["seed"]["source"] for t in tasks if t.get("seed"))
    parts = [
        f"{len(attempts)} attempt(s)",
        f"{sum(len(escalated(t['attempts'])) for t in tasks)} escalated to another tier",
        f"{sum(1 for a in attempts if a['regressed'])} regression(s) reverted by the ratchet",
    ]
    if seeds[SeedSource.OUTPUT]:
        parts.append(f"{seeds[SeedSource.OUTPUT]} task(s) seeded from the file at their output")
    if seeds[SeedSource.EARLIER_RUN]:
        parts.append(f"{seeds[SeedSource.EARLIER_RUN]} carried over from an earlier run")
    return " · ".join(parts)


def _best_seen(t: Task) -> tuple[int, str] | None:
    """The most passes any trusted candidate of this task reached tonight, and which one."""
    seen = [
        (a["passed"], f"attempt {a['n']}")
        for a in t["attempts"]
        if not a["extraction_error"] and not a.get("tampered")
    ]
    if t.get("seed"):
        seen.append((t["seed"]["passed"], "the seed"))
    return max(seen, key=lambda s: s[0]) if seen else None


def _below_best(t: Task) -> str | None:
    """A task that ships fewer passes than it reached: not the ratchet working, a problem."""
    seen = _best_seen(t)
    shipped = t["passed"] if t["output"] is not None else 0
    if seen is None or seen[0] <= shipped:
        return None
    reverted = [str(a["n"]) for a in t["attempts"] if a["regressed"]]
    also = f"; regressions at attempt(s) {', '.join(reverted)}" if reverted else ""
    what = f"ships {shipped}/{t['total']}" if t["output"] is not None else "ships nothing"
    return f"ended below its own best: {what}, {seen[1]} passed {seen[0]}{also}"


def attention(data: Mapping[str, Any]) -> Iterator[tuple[str, str | None, str]]:
    """(kind, task id or None, text): what needs a human, in the order both summaries list it."""
    for note in data.get("notes", []):
        yield "note", None, note
    for t in data["tasks"]:
        below = _below_best(t)
        if below:
            yield "below_best", t["id"], below
        if t["status"] in (TaskStatus.GUARDRAIL, TaskStatus.ERROR):
            yield t["status"], t["id"], f"{t['status']}: {t['reason']}"
        elif t.get("cause") in NEEDS_A_HUMAN:
            yield t["cause"], t["id"], f"{t['status']}: {t['reason']}"
        if any(a.get("tampered") for a in t["attempts"]):
            yield "tampering", t["id"], tampering_note(t)
        differs = differential_note(t)
        if differs:
            yield "differential", t["id"], differs
        for warning in t.get("warnings", []):
            yield "warning", t["id"], f"warning: {warning}"


def differential_note(t: Mapping[str, Any]) -> str:
    """A task that passes every test yet differs from its reference (docs/differential.md):
    the tests sample the behaviour too thinly to catch it, so a person should look."""
    found = t.get("differential") or {}
    if not found.get("differed") or t["total"] == 0 or t["passed"] != t["total"]:
        return ""
    first = (found.get("differences") or [""])[0]
    note = f"passes every test but {found['differed']} call(s) differ from the reference"
    return f"{note}; first: {first}" if first else note


def seed_words(t: Task) -> str:
    """Where the task's starting candidate came from, or "" when it started from nothing."""
    seed = t.get("seed")
    if not seed:
        return ""
    if seed["source"] == SeedSource.EARLIER_RUN:
        return f"carried over from run {seed['run_id']}"
    return "seeded from the file already at its output path"


def _unshipped_why(t: Task) -> str:
    if t["passed"] == 0:
        return "not shipped: it passes no test"
    return f"not shipped: {t['reason']}" if t["reason"] else "not shipped"


def best_cell(t: Task) -> str:
    """The table's "best" column: which candidate, and whether it was shipped."""
    best = t["best_attempt"]
    if best is None:
        return "—"
    which = "seed" if best == 0 and t.get("seed") else str(best)
    return which if t["output"] is not None else f"{which} (not shipped)"


def _skips(t: Mapping[str, Any]) -> str:
    skipped = t.get("skipped") or 0
    return f" (+{skipped} skipped by the suite)" if skipped else ""


def passed_cell(t: Mapping[str, Any]) -> str:
    """passed/total, the suite's own skips, and the hidden tests' share when there are any."""
    hidden = t.get("hidden") or {}
    extra = f" (hidden {hidden['passed']}/{hidden['total']})" if hidden.get("total") else ""
    return f"{t['passed']}/{t['total']}{_skips(t)}{extra}"


def tampering_note(t: Mapping[str, Any]) -> str:
    """Which attempts tampered, and what the sandbox saw the first time."""
    tampered = [a for a in t["attempts"] if a.get("tampered")]
    why = next((a.get("test_error") for a in tampered if a.get("test_error")), None)
    note = f"tampering detected at attempt(s) {', '.join(str(a['n']) for a in tampered)}"
    return f"{note} ({why})" if why else note


def best_note(t: Task) -> str:
    """One sentence on the task's best candidate: which one, its score, whether it shipped."""
    best = t["best_attempt"]
    if t.get("cause") == StopCause.UP_TO_DATE:
        return "up to date: nothing to do tonight"
    if best is None:
        return "no candidate to ship" if t["attempts"] else "not run"
    if best == 0 and t.get("seed"):
        which = f"best: the candidate {seed_words(t)}"
    elif any(a["n"] == best for a in t["attempts"]):
        which = f"best: attempt {best}"
    else:
        which = f"best: attempt {best} of an earlier run"
    shipped = "shipped" if t["output"] is not None else _unshipped_why(t)
    return f"{which}, {t['passed']}/{t['total']} passed{_skips(t)}, {shipped}"


def attempt_cell(a: Mapping[str, Any], escalations: frozenset[int]) -> str:
    """`n:passed/total` (✗ no usable code, ↩ reverted), then tier (↑ escalated) and cost."""
    score = "✗" if a["extraction_error"] else f"{a['passed']}/{a['total']}"
    mark = "↩" if a["regressed"] else ""
    tier = (a.get("tier") or "") + ("↑" if a["n"] in escalations else "")
    return " ".join(p for p in (f"{a['n']}:{score}{mark}", tier, money(a["cost_usd"])) if p)


def batch_words(batch: Mapping[str, Any] | None) -> str | None:
    """Batch mode in one line: how many requests went by batch and what that saved."""
    if not batch:
        return None
    return (
        f"Batch: {batch['succeeded']} of {batch['submitted']} requests by batch "
        f"({batch['fell_back']} fell back to interactive) · saved "
        f"{money(batch['saved_usd'])} vs list price"
    )
