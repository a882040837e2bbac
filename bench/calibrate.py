"""Calibration: the simulator against public figures (bench/calibration.yaml), before any
policy is compared. Each target is measured by driving the simulator with the real prompt
templates over many seeds; a task counts as passing when its code carries no bug (the
simulator's mutations) and the reply is usable, a proxy that needs no pytest run."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench import article
from harness.extract import apply_edits, extract_code, parse_edits, required_names_from_tests
from harness.llm import CallRequest, Prompt, Route, StopReason
from harness.prompts import PromptSet, default_prompts_dir, task_context
from harness.sim import SimModel, SimProvider
from harness.tasks import TaskSpec

__all__ = ["TARGETS", "calibrate", "targets"]

TARGETS = Path(__file__).resolve().parent / "calibration.yaml"
_ROUTES = {t: Route(t, "sim", f"sim-{t}", 64000) for t in ("cheap", "mid", "frontier")}
Bugs = frozenset[int] | None  # None: no usable code
# Failing tests a fix prompt shows per bug the code carries: assumed (no source counts them);
# recorded with every row it shapes (`assumptions`), beside the calibration.yaml comment.
FAILURES_PER_BUG = 2
_PROTOCOL_ASSUMPTIONS = {
    "failures_per_bug": {
        "value": FAILURES_PER_BUG,
        "label": "assumed",
        "why": "no public figure counts failing tests per bug; it sets how often "
        "fix.per_extra_failure bites in the try-2 and no-ratchet protocols",
    }
}


@dataclass
class _Task:
    """One task as the calibration drives it: its prompts, with and without context."""

    spec: TaskSpec
    prompts: PromptSet
    context: dict[str, Any]
    required: frozenset[str]
    # reply text → the code extracted from it: extraction is a pure function of the text
    # (and `required`), and the same replies recur across targets, tiers and protocols.
    extracted: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, spec: TaskSpec) -> _Task:
        sources = [p.read_text() for p in spec.tests]
        required = required_names_from_tests(sources, spec.module_name)
        context = task_context(spec, tuple(sorted(required)))
        return cls(spec, PromptSet(default_prompts_dir(), spec.type), context, required)

    def extract(self, text: str) -> str | None:
        if text not in self.extracted:
            self.extracted[text] = extract_code(text, self.required).code
        return self.extracted[text]

    def bare(self) -> dict[str, Any]:
        return {**self.context, "examples": [], "capabilities": None}


class _Driver:
    """Asks one seeded simulator for writes and fixes, reading back the bugs it produced."""

    def __init__(
        self, task: _Task, seed: int, tier: str, with_context: bool, model: SimModel | None
    ) -> None:
        self.task, self.tier = task, tier
        self.sim = SimProvider({task.spec.id: task.spec}, seed=seed, model=model)
        self.ctx = task.context if with_context else task.bare()

    def _ask(self, step: str, attempt: int, prompt: Prompt) -> tuple[str | None, Bugs]:
        request = CallRequest(_ROUTES[self.tier], prompt, self.task.spec.id, step, attempt)
        completion = self.sim.complete(request)
        if completion.stop_reason is not StopReason.END:
            return None, None
        code = self.task.extract(completion.text)
        if code is None:
            return None, None
        return code, self.sim.known_mutations(self.task.spec.id, code)

    def write(self, attempt: int) -> tuple[str | None, Bugs]:
        return self._ask("write", attempt, self.task.prompts.render("write", self.ctx))

    def fix(
        self, attempt: int, code: str, bugs: frozenset[int], feedback: str
    ) -> tuple[str | None, Bugs]:
        """A fix from `code`, showing the failures as `feedback` says: `full` (the whole test
        run, as aider's try 2 and the article's first fix prompt paste it), `filtered` (the
        article's final prompt: the failed tests' sections and names) or `focused` (the
        harness's own fix template)."""
        failures = [
            {
                "nodeid": f"tests/test_x.py::test_{i}",
                "outcome": "failed",
                "message": "",
                "details": "",
            }
            for i in range(max(1, FAILURES_PER_BUG * len(bugs)))
        ]
        if feedback in ("focused", "edits"):
            extra = {"code": code, "failures": failures, "passed": 12, "total": 12 + len(failures)}
            extra["fix_format"] = "edits" if feedback == "edits" else "whole"
            prompt = self.task.prompts.render("fix", {**self.ctx, **extra})
            return self._ask("fix", attempt, prompt)
        run = _pytest_run([f["nodeid"] for f in failures])
        shown = run if feedback == "full" else article.failed_sections(run)
        return self._ask(
            "fix", attempt, Prompt("", "", article.fix_prompt(self.task.spec, code, shown))
        )


def _pytest_run(failed: list[str]) -> str:
    """A raw pytest run with 12 passing tests and `failed`, as `pytest --tb=short` prints it."""
    lines = [
        "tests/test_x.py " + "." * 12 + "F" * len(failed),
        "",
        "=" * 20 + " FAILURES " + "=" * 20,
    ]
    for nodeid in failed:
        name = nodeid.split("::")[-1]
        lines += [
            f"{'_' * 10} {name} {'_' * 10}",
            "tests/test_x.py:1: in " + name,
            "E   AssertionError",
        ]
    lines.append("=" * 10 + " short test summary info " + "=" * 10)
    lines += [f"FAILED {nodeid} - AssertionError" for nodeid in failed]
    lines.append(f"{'=' * 10} {len(failed)} failed, 12 passed in 0.31s {'=' * 10}")
    return "\n".join(lines)


def _chain(d: _Driver, attempts: int, feedback: str, ratchet: bool) -> list[int | None]:
    """Bug counts per attempt (None: unusable) of a loop: write, then fixes."""
    code, bugs = d.write(1)
    history = [None if bugs is None else len(bugs)]
    keep = (code, bugs) if bugs is not None else None
    for n in range(2, attempts + 1):
        if history[-1] == 0:
            break  # the tests pass: every loop stops here
        if keep is None:
            code, bugs = d.write(n)
        else:
            code, bugs = d.fix(n, keep[0], keep[1], feedback)  # type: ignore[arg-type]
        history.append(None if bugs is None else len(bugs))
        if bugs is not None and (keep is None or not ratchet or len(bugs) < len(keep[1])):  # type: ignore[arg-type]
            keep = (code, bugs)
    return history


def _edits_applied(d: _Driver) -> list[bool]:
    """Whether the fix after a buggy draft, asked for SEARCH/REPLACE blocks with the harness's
    own fix template, gave edits that apply to the draft exactly (one per edit reply)."""
    code, bugs = d.write(1)
    if code is None or not bugs:
        return []
    prompt_extra = {
        "code": code,
        "failures": [{"nodeid": "t::x", "outcome": "failed", "message": "", "details": ""}],
        "passed": 12,
        "total": 13,
        "fix_format": "edits",
    }
    prompt = d.task.prompts.render("fix", {**d.ctx, **prompt_extra})
    request = CallRequest(_ROUTES[d.tier], prompt, d.task.spec.id, "fix", 2)
    completion = d.sim.complete(request)
    parsed = parse_edits(completion.text)
    if parsed is None:
        return []  # answered with the whole file: not an edit reply
    blocks, problem = parsed
    return [problem is None and apply_edits(code, blocks)[0] is not None]


def _passed_by(history: list[int | None], n: int) -> bool:
    return any(h == 0 for h in history[:n])


def _worse_than_2(history: list[int | None]) -> bool:
    """Without a ratchet the last usable code ships: worse than the attempt-2 code?"""
    last = next((h for h in reversed(history) if h is not None), None)
    second = history[1] if len(history) > 1 else None
    return second is not None and last is not None and last > second


# measure kind → what it counts, over how many attempts, with or without the ratchet
_KINDS: dict[str, tuple[int, bool]] = {
    "try1": (2, True),
    "try2": (2, True),
    "no_ratchet_worse": (5, False),
}
# protocol → (prompt with gold examples and capabilities, fix feedback)
_PROTOCOLS: dict[str, tuple[bool, str]] = {
    "aider": (False, "full"),  # context-free prompts; try 2 sees the whole test output
    "article_full_dump": (True, "full"),  # the article's loop with its first fix prompt
    "article_filtered": (True, "filtered"),  # the article's loop with its final fix prompt
}


def _runs(
    key: tuple[str, str, str], tasks: list[_Task], seeds: range, model: SimModel | None
) -> list[list[int | None]]:
    kind, protocol, tier = key
    attempts, ratchet = _KINDS[kind]
    with_context, feedback = _PROTOCOLS[protocol]
    return [
        _chain(_Driver(task, seed, tier, with_context, model), attempts, feedback, ratchet)
        for task in tasks
        for seed in seeds
    ]


def _measure(kind: str, runs: list[list[int | None]]) -> float:
    def share(f: Callable[[list[int | None]], bool]) -> float:
        return statistics.mean(f(h) for h in runs)

    if kind == "try1":
        return share(lambda h: _passed_by(h, 1))
    if kind == "try2":
        return share(lambda h: _passed_by(h, 2))
    return share(_worse_than_2)


def targets(path: Path = TARGETS) -> list[dict[str, Any]]:
    """The rows of calibration.yaml; a target that is arithmetic of others is refused."""
    rows = yaml.safe_load(path.read_text())
    for row in rows:
        if row.get("derived_from"):
            raise ValueError(
                f"{path}: target {row['target']!r} is derived from {row['derived_from']}: "
                "a derived figure is not a target; remove it"
            )
        if row["kind"] not in ("fitted", "predicted"):
            raise ValueError(f"{path}: target {row['target']!r}: kind must be fitted|predicted")
    return rows


def calibrate(
    specs: list[TaskSpec],
    seeds: int = 100,
    model: SimModel | None = None,
    only: frozenset[str] | None = None,
) -> list[dict[str, Any]]:
    """Every target of calibration.yaml (or those in `only`), measured with its source's
    protocol: target, kind, protocol, source, expected, measured, tolerance, error,
    within_tolerance. Targets sharing a protocol share its runs."""
    tasks = [_Task.of(spec) for spec in specs]
    rows, cache = [], {}
    for target in targets():
        if only is not None and target["target"] not in only:
            continue
        m = target["measure"]
        key = (m["kind"], m["protocol"], m["tier"])
        if m["kind"] == "edit_well_formed":
            if key not in cache:
                drivers = (
                    _Driver(t, s, m["tier"], True, model) for t in tasks for s in range(seeds)
                )
                cache[key] = [[int(ok)] for d in drivers for ok in _edits_applied(d)]
            measured = statistics.mean(r[0] for r in cache[key]) if cache[key] else 0.0
            rows.append(_row(target, m, measured))
            continue
        if key[:2] == ("try1", "aider"):
            key = ("try2", "aider", key[2])  # try 1 is the first step of the try-2 runs
        if key not in cache:
            cache[key] = _runs(key, tasks, range(seeds), model)
        measured = _measure(m["kind"], cache[key])
        rows.append(_row(target, m, measured))
    return rows


def _row(target: dict[str, Any], m: dict[str, Any], measured: float) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if target.get("moved_by"):
        extra["moved_by"] = list(target["moved_by"])
    if m["kind"] in ("try2", "no_ratchet_worse"):
        extra["assumptions"] = _PROTOCOL_ASSUMPTIONS
    return {
        **extra,
        "target": target["target"],
        "kind": target["kind"],
        "protocol": m["protocol"],
        "source": target["source"],
        "expected": target["expected"],
        "tolerance": target["tolerance"],
        "measured": round(measured, 4),
        "error": round(measured - target["expected"], 4),
        "within_tolerance": abs(measured - target["expected"]) <= target["tolerance"],
    }
