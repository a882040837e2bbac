"""What every stage of a bench run shares: the settings, the workspace and policy configs, the
remembered test results, and one method per kind of night (this harness, the published loop)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bench.baseline import Ratchet, run_baseline
from bench.batch import BATCH_CONFIG, BATCH_VARIANT, ROUNDS_CONFIG, ROUNDS_VARIANT
from bench.harness_night import run_harness
from bench.memo import Memo, pytest_verdict, sandbox_verdict
from bench.model import Night
from bench.policies import POLICIES, night_config
from bench.workspace import Workspace, make_workspace
from harness.sim import SimLatency, SimModel, SimProvider
from harness.tasks import load_tasks

__all__ = ["REALISTIC", "Settings", "Stages"]

# A Sonnet-class model over the API: ~1.5 s to the first token, ~67 output tokens a second.
REALISTIC = SimLatency(base_s=1.5, per_1k_output_tokens_s=15.0, jitter=0.25)


@dataclass(frozen=True)
class Settings:
    """What one bench run measures; the defaults are `make bench`."""

    tasks: int = 24
    seeds: tuple[int, ...] = (0, 1)
    concurrencies: tuple[int, ...] = (1, 4, 8)
    # simulated latency = REALISTIC / scale (None: zero). 100 keeps `make bench` under 10 min
    # on 2 cores; wall-time ratios are reported beside the scale they were measured at.
    latency_scale: float | None = 100.0
    big_list: int = 1000  # 0: skip the 1,000-task stage
    tight_cap_fraction: float | None = 0.3  # of the baseline's spend; None: skip
    tight_cap_usd: float | None = 0.95  # a fixed cap instead (the issue's $0.95 night)
    extra_variants: bool = True  # the other loop policies (bench/policies.py)
    calibration_seeds: int = 100  # seeds per calibration target (0: skip)
    max_attempts: int | None = None  # lower every task's limit; None: the example's (5-6)
    sandbox_bench: bool = True  # also run bench/bench_sandbox.py (test-runner overhead)
    isolation_rounds: int = (
        7  # bench/bench_isolation.py: boundary vs in_process vs pytest (0: skip)
    )
    scale: bool = True  # also run bench/scale.py (local pool vs two Temporal workers)
    sensitivity_seeds: tuple[int, ...] = (0,)  # seeds of the sensitivity sweep (): skip it
    sensitivity_calibration_seeds: int = 40  # seeds per re-measured target at a swept end
    policies_only: bool = False  # no timed nights, capped nights, big list or sandbox benches
    sweep_choices: bool = True  # the sweep also runs each design choice turned off
    published_variants: bool = True  # baseline_no_ratchet and baseline_full_output too
    diet: bool = True  # the fix prompt without each context block (bench/diet.py)

    @property
    def latency(self) -> SimLatency | None:
        if self.latency_scale is None:
            return None
        r, s = REALISTIC, self.latency_scale
        return SimLatency(r.base_s / s, r.per_1k_output_tokens_s / s, r.jitter)


class Stages:
    """Runs the nights of one bench run into `workdir`, reporting progress on stderr. Timed
    nights write into `timed_dir` (default: `workdir`): their wall time includes the
    harness's fsyncs, so it belongs on the disk a real night uses, while the untimed nights
    may run on a RAM disk (bench/__main__.py)."""

    def __init__(
        self, settings: Settings, workdir: Path, quiet: bool, timed_dir: Path | None = None
    ) -> None:
        self.s, self.workdir, self.quiet = settings, workdir, quiet
        self.timed_dir = timed_dir or workdir
        self.started = time.perf_counter()
        self.ws: Workspace = make_workspace(
            workdir / "tasks", settings.tasks, settings.max_attempts
        )
        self.specs = load_tasks(self.ws.tasks_yaml)
        self.configs: dict[str, Path] = {}
        for variant, policy in POLICIES.items():
            text = night_config(policy)  # bought interactively: bench/policies.py
            self.configs[variant] = workdir / f"{variant}.yaml"
            self.configs[variant].write_text(text)
            # The same policy with caching off, for the sensitivity sweep (bench/sensitivity.py).
            uncached = workdir / f"{variant}_uncached.yaml"
            off = "" if "prompt_cache:" in text else "prompt_cache: false\n"
            uncached.write_text(text + off)
            self.configs[f"{variant}_uncached"] = uncached
        self.configs[BATCH_VARIANT] = workdir / f"{BATCH_VARIANT}.yaml"
        self.configs[BATCH_VARIANT].write_text(BATCH_CONFIG)
        self.configs[ROUNDS_VARIANT] = workdir / f"{ROUNDS_VARIANT}.yaml"
        self.configs[ROUNDS_VARIANT].write_text(ROUNDS_CONFIG)
        # Untimed nights reuse test results measured earlier in this run (bench/memo.py).
        self.memos = {"harness": Memo(sandbox_verdict), "baseline": Memo(pytest_verdict)}
        # Untimed nights already run, by what decides them (_night_key): asked again (the
        # sweep's centre repeats the headline's nights), a night is not run twice.
        self.nights: dict[tuple, Night] = {}
        self.nights_reused = 0

    def note(self, text: str) -> None:
        if not self.quiet:
            print(
                f"[{time.perf_counter() - self.started:6.1f}s] {text}", file=sys.stderr, flush=True
            )

    def _once(self, key: tuple, run: Callable[[], Night]) -> Night:
        """An untimed night's outcomes are a function of its inputs (the simulator's choices
        are seeded, test results are those of the code): the one already run, if any."""
        if key in self.nights:
            self.nights_reused += 1
            return self.nights[key]
        self.nights[key] = self.say(run())
        return self.nights[key]

    def say(self, night: Night) -> Night:
        passing = sum(t.passing for t in night.tasks)
        self.note(
            f"{night.variant} seed {night.seed} c={night.concurrency}: wall {night.wall_s:.1f}s, "
            f"{passing}/{len(night.tasks)} passing, ${night.spent_usd:.4f}"
        )
        return night

    def harness(
        self,
        seed: int,
        c: int,
        timed: bool,
        variant: str = "harness",
        cap: float = 1000.0,
        model: tuple[str, SimModel] | None = None,
        prompts: tuple[str, Path] | None = None,
    ) -> Night:
        """One night of this harness; `model`: (a name for it, a behaviour model other than
        the shipped one); `prompts`: (a name for them, templates other than the shipped)."""
        config = self.configs.get(variant)
        tag = f"-{model[0]}" if model else ""
        tag += f"-{prompts[0]}" if prompts else ""
        name = f"{variant}-s{seed}-c{c}-{'t' if timed else 'z'}-{cap}{tag}"
        # A fresh copy per night: the harness seeds a task from a file already at its output
        # path (a ratchet across nights), so nights sharing outputs would not be independent.
        root = self.timed_dir if timed else self.workdir

        def run() -> Night:
            ws = make_workspace(root / "ws" / name, self.s.tasks, self.s.max_attempts)
            return run_harness(
                ws.tasks_yaml,
                root / "runs" / name,
                seed=seed,
                concurrency=c,
                latency=self.s.latency if timed else None,
                latency_scale=self.s.latency_scale if timed else None,
                cap_usd=cap,
                config=config,
                variant=variant,
                memo=self.memos["harness"],
                reuse=not timed,
                model=model[1] if model else None,
                prompts_root=prompts[1] if prompts else None,
            )

        if timed:
            return self.say(run())
        shown = prompts[0] if prompts else ""
        return self._once(("harness", seed, c, variant, cap, _model_key(model), shown), run)

    def baseline(
        self,
        seed: int,
        workers: int,
        timed: bool,
        keep: type[Ratchet] = Ratchet,
        variant: str = "baseline",
        cap: float = 1000.0,
        full_output: bool = False,
        model: tuple[str, SimModel] | None = None,
    ) -> Night:
        latency = self.s.latency if timed else None
        specs = {s.id: s for s in self.specs}
        sim = SimProvider(specs, seed=seed, latency=latency, model=model[1] if model else None)
        tag = f"-{model[0]}" if model else ""
        root = self.timed_dir if timed else self.workdir
        out = root / "baseline_out" / f"{variant}-s{seed}-w{workers}-{cap}{tag}"
        run = partial(
            run_baseline,
            self.specs,
            sim,
            seed=seed,
            out=out,
            keep_kind=keep,
            cap_usd=cap,
            workers=workers,
            latency_scale=self.s.latency_scale if timed else None,
            variant=variant,
            full_output=full_output,
            memo=self.memos["baseline"],
            reuse=not timed,
        )
        if timed:
            return self.say(run())
        key = ("baseline", seed, workers, keep, variant, cap, full_output, _model_key(model))
        return self._once(key, run)


def _model_key(model: tuple[str, SimModel] | None) -> str:
    """A behaviour model by its values, not its name: None is the shipped model."""
    data = (model[1] if model else SimModel.shipped()).data
    return json.dumps(data, sort_keys=True)
