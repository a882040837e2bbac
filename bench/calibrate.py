"""Calibration: the simulator against public figures (bench/calibration.yaml), before any
policy is compared. Each target is measured by driving the simulator with the real prompt
templates over many seeds; a task counts as passing when its code carries no bug (the
simulator's mutations) and the reply is usable, a proxy that needs no pytest run."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench import article
from harness.extract import extract_code, required_names_from_tests
from harness.llm import CallRequest, Prompt, Route, StopReason
from harness.prompts import PromptSet, default_prompts_dir, task_context
from harness.sim import SimModel, SimProvider
from harness.tasks import TaskSpec

__all__ = ["TARGETS", "calibrate"]

TARGETS = Path(__file__).resolve().parent / "calibration.yaml"
_ROUTES = {t: Route(t, "sim", f"sim-{t}", 64000) for t in ("cheap", "mid", "frontier")}
Bugs = frozenset[int] | None  # None: no usable code


@dataclass
class _Task:
    """One task as the calibration drives it: its prompts, with and without context."""

    spec: TaskSpec
    prompts: PromptSet
    context: dict[str, Any]
    required: frozenset[str]

    @classmethod
    def of(cls, spec: TaskSpec) -> _Task:
        sources = [p.read_text() for p in spec.tests]
        required = required_names_from_tests(sources, spec.module_name)
        context = task_context(spec, tuple(sorted(required)))
        return cls(spec, PromptSet(default_prompts_dir(), spec.type), context, required)

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
        code = extract_code(completion.text, self.task.required).code
        if code is None:
            return None, None
        return code, self.sim.known_mutations(self.task.spec.id, code)

    def write(self, attempt: int) -> tuple[str | None, Bugs]:
        return self._ask("write", attempt, self.task.prompts.render("write", self.ctx))

    def fix(
        self, attempt: int, code: str, bugs: frozenset[int], full: bool
    ) -> tuple[str | None, Bugs]:
        """A fix from `code`: the harness's focused prompt, or the article's full output."""
        failures = [
            {
                "nodeid": f"tests/test_x.py::test_{i}",
                "outcome": "failed",
                "message": "",
                "details": "",
            }
            for i in range(max(1, 2 * len(bugs)))
        ]
        if full:  # a raw `pytest -v --tb=short -q` run, as the published loop pastes it
            lines = ["." * 12 + "F" * len(failures), "", "=" * 20 + " FAILURES " + "=" * 20]
            lines += [f"FAILED {f['nodeid']} - AssertionError" for f in failures]
            lines.append(f"{len(failures)} failed, 12 passed in 0.31s")
            prompt = Prompt("", "", article.fix_prompt(self.task.spec, code, "\n".join(lines)))
        else:
            extra = {"code": code, "failures": failures, "passed": 12, "total": 12 + len(failures)}
            prompt = self.task.prompts.render("fix", {**self.ctx, **extra})
        return self._ask("fix", attempt, prompt)


def _chain(d: _Driver, attempts: int, full: bool, ratchet: bool) -> list[int | None]:
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
            code, bugs = d.fix(n, keep[0], keep[1], full)  # type: ignore[arg-type]
        history.append(None if bugs is None else len(bugs))
        if bugs is not None and (keep is None or not ratchet or len(bugs) < len(keep[1])):  # type: ignore[arg-type]
            keep = (code, bugs)
    return history


def _passed_by(history: list[int | None], n: int) -> bool:
    return any(h == 0 for h in history[:n])


def _worse_than_2(history: list[int | None]) -> bool:
    """Without a ratchet the last usable code ships: worse than the attempt-2 code?"""
    last = next((h for h in reversed(history) if h is not None), None)
    second = history[1] if len(history) > 1 else None
    return second is not None and last is not None and last > second


_KINDS: dict[str, tuple[bool, int, bool, bool]] = {
    # kind: (prompt with context, attempts, full output, ratchet)
    "try1": (False, 2, False, True),
    "try2": (False, 2, False, True),
    "try2_over_try1": (False, 2, False, True),
    "no_ratchet_worse": (True, 5, True, False),
    "early_gain_share": (True, 5, False, True),
}


def _runs(
    key: tuple[bool, int, bool, bool, str], tasks: list[_Task], seeds: range, model: SimModel | None
) -> list[list[int | None]]:
    with_context, attempts, full, ratchet, tier = key
    return [
        _chain(_Driver(task, seed, tier, with_context, model), attempts, full, ratchet)
        for task in tasks
        for seed in seeds
    ]


def _measure(kind: str, runs: list[list[int | None]]) -> float:
    share: Callable[[Callable[[list[int | None]], bool]], float] = lambda f: statistics.mean(  # noqa: E731
        f(h) for h in runs
    )
    try1 = share(lambda h: _passed_by(h, 1))
    if kind == "try1":
        return try1
    if kind == "try2":
        return share(lambda h: _passed_by(h, 2))
    if kind == "try2_over_try1":
        return share(lambda h: _passed_by(h, 2)) / try1 if try1 else float("inf")
    if kind == "no_ratchet_worse":
        return share(_worse_than_2)
    gain5 = share(lambda h: _passed_by(h, 5)) - try1
    return (share(lambda h: _passed_by(h, 3)) - try1) / gain5 if gain5 else 0.0


def calibrate(
    specs: list[TaskSpec], seeds: int = 100, model: SimModel | None = None
) -> list[dict[str, Any]]:
    """Every target of calibration.yaml, measured: target, source, expected, measured,
    tolerance, within_tolerance. Targets sharing a protocol share its runs."""
    tasks = [_Task.of(spec) for spec in specs]
    rows, cache = [], {}
    for target in yaml.safe_load(TARGETS.read_text()):
        kind, tier = target["measure"]["kind"], target["measure"]["tier"]
        key = (*_KINDS[kind], tier)
        if key not in cache:
            cache[key] = _runs(key, tasks, range(seeds), model)
        measured = _measure(kind, cache[key])
        rows.append(
            {
                "target": target["target"],
                "source": target["source"],
                "expected": target["expected"],
                "tolerance": target["tolerance"],
                "measured": round(measured, 4),
                "within_tolerance": abs(measured - target["expected"]) <= target["tolerance"],
            }
        )
    return rows
