"""The published loop, re-implemented: sequential; write → cheap review → rewrite on attempt 1;
fix-only retries fed the failed tests' sections and names (the article's final fix prompt;
a variant pastes the whole pytest output, the first version the article abandoned); the
whole prompt resent uncached on every call; the budget checked after each call; BestTracker,
or (a variant) no ratchet at all."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from bench import article
from bench.article import ArticleTracker, EvalResult
from bench.instrument import Billed, NoPromptCache, Probe, TimedProvider
from bench.memo import Memo
from bench.model import Night, TaskOutcome
from harness.config import check_prices, load_config
from harness.extract import required_names_from_tests
from harness.llm import CallRequest, Prompt, Provider
from harness.pricing import PriceTable, cost
from harness.prompts import PromptSet, default_prompts_dir, task_context
from harness.router import Router
from harness.tasks import TaskSpec

__all__ = ["BudgetStop", "LastAttempt", "Ratchet", "run_baseline"]


class BudgetStop(Exception):
    """The spend reached the cap: checked after the call, so that call is already paid."""


class Ratchet:
    """As published: every fix starts from the best code so far, and the best ships."""

    def __init__(self) -> None:
        self.tracker = ArticleTracker()

    def keep(self, code: str, result: EvalResult) -> None:
        self.tracker.update(code, result)

    @property
    def working(self) -> tuple[str, EvalResult] | None:
        t = self.tracker
        return None if t.best_code is None else (t.best_code, t.best_result)  # type: ignore[return-value]

    shipped = working


class LastAttempt(Ratchet):
    """The variant without the ratchet: fixes start from, and the night ships, the last code."""

    def __init__(self) -> None:
        super().__init__()
        self._last: tuple[str, EvalResult] | None = None

    def keep(self, code: str, result: EvalResult) -> None:
        super().keep(code, result)  # still tracked, only to measure what was given away
        self._last = (code, result)

    @property
    def working(self) -> tuple[str, EvalResult] | None:
        return self._last

    shipped = working


@dataclass
class _Env:
    """What every task of a baseline night shares."""

    provider: Provider
    prices: PriceTable
    router: Router
    prompts: dict[str, PromptSet]
    probe: Probe
    cap: Decimal
    out: Path
    lock: threading.Lock = field(default_factory=threading.Lock)
    spent: Decimal = Decimal(0)
    stopped: bool = False
    task_costs: dict[str, Decimal] = field(default_factory=dict)
    run_pytest: Callable[[TaskSpec, str], EvalResult] = article.run_pytest
    feedback: Callable[[str], str] = article.failed_sections  # what a fix prompt shows

    def call(self, spec: TaskSpec, step: str, attempt: int, prompt: Prompt) -> str:
        route = self.router.route(step)  # no escalation: the frontier tier is not in the loop
        completion = self.provider.complete(CallRequest(route, prompt, spec.id, step, attempt))
        amount = cost(completion.usage, self.prices.get(route.model, route.pricing))
        with self.lock:
            self.spent += amount
            self.task_costs[spec.id] = self.task_costs.get(spec.id, Decimal(0)) + amount
            if self.spent >= self.cap:  # after the call, as published
                self.stopped = True
                raise BudgetStop(f"spent ${self.spent:.4f} of ${self.cap}")
        return completion.text

    def render(self, spec: TaskSpec, step: str, variables: dict) -> Prompt:
        return self.prompts[spec.type].render(step, variables)

    def test(self, spec: TaskSpec, code: str) -> EvalResult:
        started = time.perf_counter()
        result = self.run_pytest(spec, code)
        took = time.perf_counter() - started
        self.probe.tests(spec.id, took)
        return result


def _whole(output: str) -> str:
    return output


def _first_attempt(env: _Env, spec: TaskSpec, context: dict, attempt: int) -> str | None:
    """write (mid) → review (cheap) → rewrite (mid) unless the review says CLEAN."""
    text = env.call(spec, "write", attempt, env.render(spec, "write", context))
    code = article.extract_code(text)
    if code is None or attempt > 1:
        return code
    review = env.call(
        spec, "review", attempt, env.render(spec, "review", {**context, "code": code})
    )
    if review.strip().upper() == "CLEAN":
        return code
    violations = [
        line.strip().lstrip("-* ").strip() for line in review.splitlines() if line.strip()
    ]
    rewrite = env.render(spec, "rewrite", {**context, "code": code, "violations": violations})
    return article.extract_code(env.call(spec, "rewrite", attempt, rewrite))


def _fix(env: _Env, spec: TaskSpec, attempt: int, working: tuple[str, EvalResult]) -> str | None:
    code, result = working
    prompt = Prompt("", "", article.fix_prompt(spec, code, env.feedback(result.output)))
    return article.extract_code(env.call(spec, "fix", attempt, prompt))


def _attempts(env: _Env, spec: TaskSpec, keep: Ratchet, made: list[int]) -> None:
    """The attempt loop; `made` counts attempts as they start (a budget stop cuts one short)."""
    sources = [p.read_text() for p in spec.tests]
    required = required_names_from_tests(sources, spec.module_name)
    context = task_context(spec, tuple(sorted(required)))
    output = env.out / spec.id / spec.output.name
    output.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, spec.max_attempts + 1):
        made.append(attempt)
        working = keep.working
        if working is None:
            code = _first_attempt(env, spec, context, attempt)
        else:
            code = _fix(env, spec, attempt, working)
        if code is None:
            continue  # the article's extractor raised: the attempt is lost
        result = env.test(spec, code)
        keep.keep(code, result)
        output.write_text(keep.working[0])  # type: ignore[index]  # the revert, when ratcheting
        if result.passed:
            return


def _run_task(env: _Env, spec: TaskSpec, keep_kind: type[Ratchet]) -> TaskOutcome:
    keep, made = keep_kind(), []
    if not env.stopped:
        with contextlib.suppress(BudgetStop):  # the night stops; this task ships what it has
            _attempts(env, spec, keep, made)
    tally = env.probe.of(spec.id)
    best, shipped = keep.tracker.best_result, keep.shipped
    return TaskOutcome(
        id=spec.id,
        total=best.total if best else 0,
        best_passed=max(keep.tracker.best_passed, 0),
        shipped_passed=shipped[1].passed_count if shipped else 0,
        cost_usd=float(env.task_costs.get(spec.id, Decimal(0))),
        attempts=len(made),
        calls=tally.calls,
        provider_s=tally.provider_s,
        latency_s=tally.latency_s,
        test_s=tally.test_s,
        test_runs=tally.test_runs,
        tokens=tally.tokens,
        bill=tuple(tally.bill),
    )


def run_baseline(
    specs: list[TaskSpec],
    sim: Provider,
    *,
    seed: int,
    out: Path,
    keep_kind: type[Ratchet] = Ratchet,
    cap_usd: float = 1000.0,
    workers: int = 1,
    latency_scale: float | None = None,
    variant: str = "baseline",
    full_output: bool = False,
    route_to: str | None = "sim",
    config_path: Path | None = None,
    memo: Memo | None = None,
    reuse: bool = False,
) -> Night:
    """One baseline night over `specs`. workers=1 is the published, sequential loop; more
    workers are only a bench shortcut where order cannot matter (no latency, no binding cap).
    `full_output`: fixes paste the whole pytest run instead of the failed tests' sections.
    `route_to`: the provider every tier goes to; None: each route's own (a live night, where
    `sim` dispatches by the request's route). `memo`, `reuse`: as for
    bench.harness_night.run_harness."""
    probe = Probe()
    config = load_config(config_path)
    env = _Env(
        provider=TimedProvider(NoPromptCache(Billed(sim, probe)), probe, bill=False),
        prices=check_prices(config),  # the operator's table and endpoints, as a night's
        router=Router.from_config(config, route_to),
        prompts={t: PromptSet(default_prompts_dir(), t) for t in {s.type for s in specs}},
        probe=probe,
        cap=Decimal(str(cap_usd)),
        out=out,
        feedback=_whole if full_output else article.failed_sections,
    )
    if memo is not None:
        env.run_pytest = memo.wrap(article.run_pytest, reuse)
    started = time.perf_counter()
    run: Callable[[TaskSpec], TaskOutcome] = lambda s: _run_task(env, s, keep_kind)  # noqa: E731
    with ThreadPoolExecutor(workers) as pool:
        outcomes = tuple(pool.map(run, specs))
    wall = time.perf_counter() - started
    return Night(
        variant,
        seed,
        workers,
        latency_scale,
        wall,
        float(env.spent),
        cap_usd,
        outcomes,
        stopped=env.stopped,
    )
