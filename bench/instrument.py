"""Composable wrappers that measure a run without touching the harness: provider and tests."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bench.model import Call, Tokens
from harness.llm import CallRequest, Completion, Provider, Usage
from harness.results import TestResult
from harness.tasks import TaskSpec

__all__ = ["Billed", "NoPromptCache", "Probe", "TimedProvider", "timed_tests"]


@dataclass
class _Tally:
    calls: int = 0
    provider_s: float = 0.0
    latency_s: float = 0.0
    tokens: Tokens = field(default_factory=Tokens)
    test_runs: int = 0
    test_s: float = 0.0  # the runs themselves: the sandbox's own duration, no slot wait
    bill: list[Call] = field(default_factory=list)  # every call as billed, in order


class Probe:
    """Per-task tallies of calls, provider time, simulated latency, tokens and test time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tallies: dict[str, _Tally] = defaultdict(_Tally)

    def call(self, task_id: str, seconds: float, completion: Completion) -> None:
        u = completion.usage
        tokens = Tokens(u.input_tokens, u.cache_write_tokens, u.cache_read_tokens, u.output_tokens)
        with self._lock:
            tally = self._tallies[task_id]
            tally.calls += 1
            tally.provider_s += seconds
            tally.latency_s += completion.latency_s
            tally.tokens = tally.tokens + tokens

    def billed(self, request: CallRequest, completion: Completion) -> None:
        """One call's usage as the provider reported it (caching as the request asked)."""
        u = completion.usage
        call = Call(
            request.step,
            completion.model,
            u.input_tokens,
            u.cache_write_tokens,
            u.cache_read_tokens,
            u.output_tokens,
        )
        with self._lock:
            self._tallies[request.task_id].bill.append(call)

    def tests(self, task_id: str, seconds: float) -> None:
        with self._lock:
            tally = self._tallies[task_id]
            tally.test_runs += 1
            tally.test_s += seconds

    def of(self, task_id: str) -> _Tally:
        with self._lock:
            tally = self._tallies[task_id]
            return replace(tally, bill=list(tally.bill))


class TimedProvider(Provider):
    """A Provider that times every `complete` of the provider it wraps into a Probe."""

    def __init__(self, inner: Provider, probe: Probe, bill: bool = True) -> None:
        self.name = inner.name
        self._inner = inner
        self._probe = probe
        self._bill = bill  # False: a wrapper inside records the bill (Billed)

    def complete(self, request: CallRequest) -> Completion:
        started = time.perf_counter()
        completion = self._inner.complete(request)
        self._probe.call(request.task_id, time.perf_counter() - started, completion)
        if self._bill:
            self._probe.billed(request, completion)
        return completion


class Billed:
    """Records each call's usage as the provider gave it into the Probe's bill: inside
    NoPromptCache, the published loop's calls with the caching its prompts would get."""

    def __init__(self, inner: Provider, probe: Probe) -> None:
        self.name = inner.name
        self.requests_per_call, self.billed = inner.requests_per_call, inner.billed
        self._inner = inner
        self._probe = probe

    def complete(self, request: CallRequest) -> Completion:
        completion = self._inner.complete(request)
        self._probe.billed(request, completion)
        return completion


class NoPromptCache(Provider):
    """A Provider as the published loop sees it: no prompt caching, so every cached token
    (read or written) is billed as fresh input."""

    def __init__(self, inner: Provider) -> None:
        self.name = inner.name
        self.requests_per_call, self.billed = inner.requests_per_call, inner.billed
        self._inner = inner

    def complete(self, request: CallRequest) -> Completion:
        completion = self._inner.complete(request)
        u = completion.usage
        fresh = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens
        return replace(completion, usage=Usage(input_tokens=fresh, output_tokens=u.output_tokens))


def timed_tests(
    run: Callable[[TaskSpec, str], TestResult], probe: Probe
) -> Callable[[TaskSpec, str], TestResult]:
    """`run` with each run's time recorded: the sandbox's own measure, which leaves out the
    static precheck and any wait for a test slot; a candidate the precheck rejects never ran."""

    def timed(spec: TaskSpec, code: str) -> TestResult:
        result = run(spec, code)
        if result.duration_s > 0:
            probe.tests(spec.id, result.duration_s)
        return result

    return timed
