"""Offline simulator provider: degrades each task's known-good solution the way real models err.

Every random choice comes from random.Random seeded with a string key built from the seed,
the task, the attempt and the step, never from shared state, so replies are the same for a
seed whatever the call order or thread. A write is the solution with k mutations; a fix is a
biased random walk from the mutation set of the code it is given (looked up in a memo of
everything produced, or replayed after a restart); pytest then sees real, oscillating
pass counts. The chances come from the behaviour model (_sim_model, sim_model.yaml): they
depend on the answering tier and on what the prompt shows. A task with no `solution:` is
answered with its reference code, and the simulator says so (`sim_from_reference`, once per
task, and `from_reference` for the morning summary).
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from harness.extract import language_named
from harness.llm import (
    CallRequest,
    Completion,
    ErrorKind,
    Provider,
    ProviderError,
    StopReason,
    Usage,
)
from harness.sim import mutate, reply
from harness.sim.asks import Wants, ask, seen
from harness.sim.judge import JudgeCase, principles_in, verdict_reply
from harness.sim.model import Features, SimModel, read_features
from harness.sim.mutate_c import find_c_sites
from harness.tasks import TaskSpec

__all__ = ["SimLatency", "SimModel", "SimProvider"]

CHARS_PER_TOKEN = 4
STEPS = ("write", "review", "rewrite", "fix")
_FIRST_BLOCK = r"```(?:{})[^\n]*\n(.*?)^```"  # the code a review, rewrite or fix is given

log = structlog.get_logger()


@dataclass(frozen=True)
class SimLatency:
    """Simulated call time: base + per 1k output tokens, spread by ± jitter (a fraction)."""

    base_s: float = 0.3
    per_1k_output_tokens_s: float = 1.5
    jitter: float = 0.25

    def seconds(self, key: str, output_tokens: int) -> float:
        spread = 1 + self.jitter * (2 * random.Random(key).random() - 1)
        return max(0.0, (self.base_s + self.per_1k_output_tokens_s * output_tokens / 1000) * spread)


@dataclass(frozen=True)
class _Task:
    """What the simulator knows of one task: its solution, that solution's mutation sites,
    and the reference code it answers with when there is no solution."""

    solution: str | None
    sites: tuple[mutate.Site, ...]
    reference: str
    dialect: reply.Dialect = reply.PYTHON
    spec: TaskSpec | None = None  # read again only by the judge, which is off by default
    wants: Wants = field(default_factory=Wants)  # what it asks for (harness/sim/asks.py)

    @classmethod
    def load(cls, spec: TaskSpec, outputs: tuple[Path, ...] = ()) -> _Task:
        refs = spec.reference
        reference = refs[0].read_text(encoding="utf-8") if refs else ""
        language = language_named(spec.language)
        dialect = reply.Dialect(language.fence, language.grammar, language.fences)
        if spec.solution is None:
            return cls(None, (), reference, dialect, spec)
        solution = spec.solution.read_text(encoding="utf-8").replace("\r\n", "\n")
        grammar = language.grammar
        sites = mutate.find_sites(solution) if grammar is None else find_c_sites(solution, grammar)
        return cls(solution, sites, reference, dialect, spec, Wants.of(spec, outputs))

    def code(self, mutations: frozenset[int]) -> str:
        if self.solution is None:
            return self.reference
        return mutate.render(self.solution, self.sites, mutations)


class SimProvider(Provider):
    """Provider that answers from each task's `solution`, degraded by seeded AST mutations."""

    name = "sim"

    def __init__(
        self,
        tasks: Mapping[str, TaskSpec],
        seed: int = 0,
        latency: SimLatency | None = None,
        model: SimModel | None = None,
    ) -> None:
        self._model = model or SimModel.shipped()
        outputs = tuple(spec.output for spec in tasks.values())
        self._tasks = {task_id: _Task.load(spec, outputs) for task_id, spec in tasks.items()}
        self._seed = seed
        self._latency = latency
        self._lock = threading.Lock()
        self._memo: dict[tuple[str, str], frozenset[int]] = {}  # (task, code key) → mutations
        self._prefixes: set[tuple[str, str, str]] = set()  # (task, model, prefix hash) cached
        self._said: set[str] = set()  # tasks whose answer from the reference was announced

    @property
    def from_reference(self) -> tuple[str, ...]:
        """The tasks this simulator answers with their reference code (no `solution:`)."""
        return tuple(task_id for task_id, task in self._tasks.items() if task.solution is None)

    def complete(self, request: CallRequest) -> Completion:
        task = self._tasks.get(request.task_id)
        if task is None:
            raise ProviderError(ErrorKind.FATAL, f"no task {request.task_id!r}", provider="sim")
        if request.step != "judge" and base_step(request.step) not in STEPS:
            raise ProviderError(ErrorKind.FATAL, f"unknown step {request.step!r}", provider="sim")
        if request.step == "judge":
            text, stop = self._judge(task, request), StopReason.END
        else:
            text, stop = self._reply(task, request)
        cut = stop is not StopReason.TOOL_USE  # a tool turn is short and stays whole JSON
        if cut and len(text) > request.route.max_tokens * CHARS_PER_TOKEN:
            text, stop = text[: request.route.max_tokens * CHARS_PER_TOKEN], StopReason.MAX_TOKENS
        usage = self._usage(request, text)
        latency = 0.0
        if self._latency is not None:
            key = self._key(request.task_id, request.attempt, request.step, "latency")
            latency = self._latency.seconds(key, usage.output_tokens)
            time.sleep(latency)
        return Completion(text, usage, stop, request.route.model, self.name, latency_s=latency)

    def known_mutations(self, task_id: str, code: str) -> frozenset[int] | None:
        """The mutation-site indices behind `code`, if this simulator produced it."""
        with self._lock:
            return self._memo.get((task_id, _code_key(code)))

    def _key(self, task_id: str, attempt: int, step: str, *parts: object) -> str:
        return ":".join(map(str, (self._seed, task_id, attempt, step, *parts)))

    def _rng(self, task_id: str, attempt: int, step: str, *parts: object) -> random.Random:
        return random.Random(self._key(task_id, attempt, step, *parts))

    def _reply(self, task: _Task, request: CallRequest) -> tuple[str, StopReason]:
        # Every round of a step (`fix+1`) draws as the step does: the answer after asking
        # differs from one without only by what the rounds' results showed.
        task_id, attempt, step = request.task_id, request.attempt, base_step(request.step)
        rng = self._rng(task_id, attempt, step, "reply")
        if task.solution is None:
            self._say_from_reference(task_id)
            text = "CLEAN" if step == "review" else reply.fence(task.reference, task.dialect)
            return text, StopReason.END
        features = seen(read_features(request), request.rounds, task.wants)
        asking = self._rng(task_id, attempt, step, "ask")
        turn = ask(request, features, task.wants, asking, self._model.asks_for_context())
        if turn is not None:
            return turn, StopReason.TOOL_USE
        if step == "write":
            mutations = self._write(task, task_id, features)
        else:
            mutations = self._given(task, request)
        if step == "review":
            lists = self._review_lists(task_id, attempt, len(mutations))
            return reply.review(
                rng, task.code(mutations), lists, self._model.ramble()
            ), StopReason.END
        if step == "rewrite":
            mutations = self._rewrite(task_id, features, mutations)
        elif step == "fix":
            mutations = self._fix(task, task_id, features, mutations)
        code = self._remember(task, task_id, mutations)
        if step == "fix" and features.edits:
            edit_rng = self._rng(task_id, attempt, step, "edits")
            malformed = self._model.edit_malformed(features.tier)
            answer = reply.edits(
                edit_rng, self._shown(task, request), code, malformed, task.dialect
            )
            if answer is not None:
                return answer
        factor = self._model.unusable_factor(features.tier)
        return reply.wrap(rng, code, factor, task.dialect, self._model.unusable())

    def _say_from_reference(self, task_id: str) -> None:
        """Announce, once per task, that its replies are its reference, not a degraded port."""
        with self._lock:
            if task_id in self._said:
                return
            self._said.add(task_id)
        log.warning("sim_from_reference", task_id=task_id, missing="solution")

    def _judge(self, task: _Task, request: CallRequest) -> str:
        """A verdict on the code in the prompt, seeded per (seed, task, attempt, code,
        principle)."""
        fences = "|".join(map(re.escape, task.dialect.fences))
        match = re.search(_FIRST_BLOCK.format(fences), request.prompt.variable, re.M | re.S)
        case = _judge_case(task, match.group(1) if match else "")
        principles = principles_in(request.prompt.stable)

        def rng(part: object) -> random.Random:  # the code in the key: each candidate its luck
            return self._rng(request.task_id, request.attempt, "judge", _code_key(case.code), part)

        return verdict_reply(case, principles, rng, self._model.judge_chances())

    # The walk: each step is a pure function of (seed, task, attempt, step, starting set) and
    # the request's features; draws come in a fixed order whatever the chances, so two
    # policies asking the same question see the same luck (common random numbers).

    def _write(self, task: _Task, task_id: str, f: Features) -> frozenset[int]:
        rng = self._rng(task_id, f.attempt, "write", "walk")
        weights = self._model.bug_weights(f)
        bugs = rng.choices(range(len(weights)), weights=weights)[0]
        bugs += sum(rng.random() < p for p in self._model.missing_context_bugs(f))
        mutations: frozenset[int] = frozenset()
        for _ in range(bugs):
            mutations = mutate.add_one(rng, task.sites, mutations)
        self._remember(task, task_id, mutations)
        return mutations

    def _review_lists(self, task_id: str, attempt: int, mutation_count: int) -> bool:
        chance = self._model.review_lists(mutation_count)
        return self._rng(task_id, attempt, "review", "walk").random() < chance

    def _rewrite(self, task_id: str, f: Features, mutations: frozenset[int]) -> frozenset[int]:
        rng = self._rng(task_id, f.attempt, "rewrite", "walk", sorted(mutations))
        fixes = rng.random() < self._model.rewrite_fixes(f.tier)
        return mutate.remove_one(rng, mutations) if fixes else mutations

    def _fix(
        self, task: _Task, task_id: str, f: Features, mutations: frozenset[int]
    ) -> frozenset[int]:
        """Each bug fixed with the model's chance; then, maybe, adjacent code broken."""
        rng = self._rng(task_id, f.attempt, "fix", "walk", sorted(mutations))
        p_fix, p_break = self._model.fix_each(f), self._model.break_nearby(f)
        fixed = frozenset(m for m in sorted(mutations) if rng.random() >= p_fix)
        if rng.random() >= p_break:
            return fixed
        touched = sorted(mutations - fixed) or sorted(mutations)
        near = task.sites[rng.choice(touched)].start if touched else None
        return mutate.add_one(rng, task.sites, fixed, avoid=mutations, near=near)

    def _shown(self, task: _Task, request: CallRequest) -> str:
        """The code the prompt gives (its first fenced block of the task's language)."""
        fences = "|".join(map(re.escape, task.dialect.fences))
        match = re.search(_FIRST_BLOCK.format(fences), request.prompt.variable, re.M | re.S)
        return match.group(1) if match else ""

    def _given(self, task: _Task, request: CallRequest) -> frozenset[int]:
        """The mutation set of the code in the prompt: from the memo, else replayed."""
        code = self._shown(task, request)
        known = self.known_mutations(request.task_id, code)
        if known is not None:
            return known
        replayed = self._replay(task, request.task_id, request.attempt, request.step)
        known = self.known_mutations(request.task_id, code)
        return replayed if known is None else known

    def _replay(self, task: _Task, task_id: str, attempt: int, step: str) -> frozenset[int]:
        """After a restart the memo is empty: redo the walk as if each fix started from the
        previous attempt (which attempts the ratchet kept is not known here), remembering
        every state, so code from any of them is recognised again."""
        mutations = self._write(task, task_id, Features("mid", 1))
        if step == "review" and attempt <= 1:
            return mutations
        if self._review_lists(task_id, 1, len(mutations)):
            mutations = self._rewrite(task_id, Features("mid", 1), mutations)
            self._remember(task, task_id, mutations)
        for previous in range(2, attempt):
            mutations = self._fix(task, task_id, Features("mid", previous), mutations)
            self._remember(task, task_id, mutations)
        return mutations

    def _remember(self, task: _Task, task_id: str, mutations: frozenset[int]) -> str:
        code = task.code(mutations)
        key = (task_id, _code_key(code))
        with self._lock:  # two sets rendering alike: keep the smaller, whatever came first
            known = self._memo.get(key)
            if known is None or sorted(mutations) < sorted(known):
                self._memo[key] = mutations
        return code

    def _usage(self, request: CallRequest, text: str) -> Usage:
        """Prefix (system + stable) cached like Anthropic's: written by a task's first call
        with it on a model, read afterwards; the per-attempt part is always fresh. A route
        with `prompt_cache` off is billed all fresh, as the provider would."""
        prompt = request.prompt
        prefix = tokens(prompt.system + prompt.stable)
        rounds = _tool_tokens(request)  # after the prompt: never part of the cached prefix
        if not request.route.prompt_cache:
            fresh = prefix + tokens(prompt.variable) + rounds
            return Usage(
                input_tokens=fresh, output_tokens=min(tokens(text), request.route.max_tokens)
            )
        digest = hashlib.sha256(f"{prompt.system}\x00{prompt.stable}".encode()).hexdigest()
        key = (request.task_id, request.route.model, digest)
        with self._lock:
            first = key not in self._prefixes
            self._prefixes.add(key)
        return Usage(
            input_tokens=tokens(prompt.variable) + rounds,
            cache_write_tokens=prefix if first else 0,
            cache_read_tokens=0 if first else prefix,
            output_tokens=min(tokens(text), request.route.max_tokens),
        )


def _judge_case(task: _Task, code: str) -> JudgeCase:
    """What the simulated judge compares; it sees nothing without a Python solution."""
    spec = task.spec
    if spec is None or task.solution is None or spec.language != "python":
        return JudgeCase(code=code, solution=code)
    return JudgeCase(
        code=code,
        solution=task.solution,
        references=tuple(p.read_text(encoding="utf-8") for p in spec.reference),
        tests=tuple(p.read_text(encoding="utf-8") for p in spec.tests),
        reference_modules=tuple(p.stem for p in spec.reference),
    )


def base_step(step: str) -> str:
    """The step a round belongs to: `fix+1` is a round of `fix`."""
    return step.split("+", 1)[0]


def _tool_tokens(request: CallRequest) -> int:
    """The tool definitions and the earlier rounds (turns and results), as input tokens."""
    if not request.tools and not request.rounds:
        return 0
    text = "".join(t.name + t.description + t.schema_json for t in request.tools)
    text += "".join(r.turn + "".join(x.content for x in r.results) for r in request.rounds)
    return tokens(text)


def _code_key(code: str) -> str:
    """Identity of code as the pipeline hands it back: blind to fences' trailing newlines,
    trailing spaces and line endings, which extraction and storage may change."""
    lines = (line.rstrip() for line in code.strip("\n").splitlines())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def tokens(text: str) -> int:
    """Token estimate from characters, as a tokenizer-free simulator can."""
    return -(-len(text) // CHARS_PER_TOKEN)
