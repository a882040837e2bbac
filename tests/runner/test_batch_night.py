"""The batch phase against the simulated vendor: re-attaching, the create→record window, and
a property over random outcomes and timings: spend never crosses the cap, nothing twice."""

from __future__ import annotations

import datetime as dt
import itertools
import tempfile
import threading
from decimal import Decimal
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from harness.budget import Budget, BudgetExceeded, estimate_worst_case
from harness.calls.caller import Caller
from harness.llm import (
    BatchItem,
    BatchLimits,
    CallRequest,
    Completion,
    EntryOutcome,
    Prompt,
    Provider,
    Route,
    ServiceTier,
    StopReason,
    Usage,
)
from harness.pricing import cost
from harness.runner.batch.night import BatchNight, BatchTiming
from harness.sim import SimBatch, SimBatchScript
from harness.store import RunParams, Store
from tests.conftest import fixture_prices

PRICES = fixture_prices()
MODEL = "claude-sonnet-5-5"
RUN = "r1"


class Vendor(Provider):
    """An interactive provider whose reply's usage stays inside the request's worst case."""

    name = "sim"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def complete(self, request: CallRequest) -> Completion:
        self.calls.append(request.task_id)
        prompt = request.prompt
        usage = Usage(input_tokens=len(prompt.text) // 4, output_tokens=request.route.max_tokens)
        return Completion("```python\nx = 1\n```", usage, StopReason.END, MODEL, "sim")


class CappedBudget(Budget):
    """A Budget that checks, at every settle, that spend has not crossed the run cap."""

    def settle(self, reservation, actual) -> None:
        super().settle(reservation, actual)
        assert self.cap_run is None or self.spent_run <= self.cap_run


def _request(task_id: str, size: int, max_tokens: int) -> CallRequest:
    route = Route("mid", "sim", MODEL, max_tokens)
    prompt = Prompt("system", f"reference of {task_id} " + "x" * size, "\nwrite it\n")
    return CallRequest(route, prompt, task_id, "write", 1)


def _store(folder: Path) -> Store:
    store = Store.open(folder / "harness.db")
    store.begin_run(RUN, dt.datetime.now(dt.UTC), "sim", None, RunParams())
    return store


def _night(store, batch, budget, *, deadline=1e18, clock=None) -> BatchNight:
    ticks = itertools.count()
    return BatchNight(
        {"sim": batch},
        BatchTiming(deadline, 0.0001, 0.0001),
        budget=budget,
        prices=PRICES,
        calls=store.call_log(RUN),
        batch_log=store.batch_log(RUN),
        run_id=RUN,
        stop=threading.Event(),
        clock=clock or (lambda: float(next(ticks))),
    )


def test_a_batch_created_but_not_recorded_is_found_not_created_again(tmp_path) -> None:
    """The create→record window: the run's batch is found by its display name and used."""
    store, vendor = _store(tmp_path), Vendor()
    batch = SimBatch(vendor, SimBatchScript(polls_to_end=1))
    requests = [_request("a", 10, 100), _request("b", 10, 100)]
    night = _night(store, batch, Budget(Decimal(10)))
    items = [BatchItem(r.task_id, r) for r in requests]
    batch.submit(items, display_name=f"harness {RUN} sim/{MODEL} #1")  # then the crash

    waiting = night.start(requests)
    night.poll()

    assert (batch.creates, waiting) == (1, {"a", "b"})
    assert [b.handle.display_name for b in store.batch_log(RUN).batches()] == [
        f"harness {RUN} sim/{MODEL} #1"
    ]
    assert all(store.recorded_reply(RUN, r) is not None for r in requests)


def test_a_second_process_reattaches_and_settles_nothing_twice(tmp_path) -> None:
    """After a crash mid-night, a new BatchNight over the same store polls the recorded batch;
    a write already settled is not waited for, reserved or recorded again."""
    store, vendor = _store(tmp_path), Vendor()
    state = tmp_path / "vendor.json"
    script = SimBatchScript(polls_to_end=None, ready_after={"a": 1})
    first = _night(store, SimBatch(vendor, script, state=state), Budget(Decimal(10)))
    requests = [_request("a", 10, 100), _request("b", 10, 100)]
    first.start(requests)
    later = SimBatch(vendor, SimBatchScript(polls_to_end=1), state=state)
    budget = Budget(Decimal(10))

    second = _night(store, later, budget)
    waiting = second.start(requests)
    second.poll()

    calls = store.call_log(RUN)
    assert (waiting, later.creates) == ({"a", "b"}, 0)
    assert all(calls.recorded(r) is not None for r in requests)
    third = _night(store, later, Budget(Decimal(10)))
    assert third.start(requests) == set()
    assert len(store._db.read("SELECT id FROM calls WHERE run_id=?", (RUN,))) == 2


outcomes = st.sampled_from(list(EntryOutcome)[:3])  # succeeded, errored, expired


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 6),
    cap=st.decimals(min_value=0, max_value=Decimal("0.6"), places=4),
    sizes=st.lists(st.integers(0, 20_000), min_size=6, max_size=6),
    max_tokens=st.lists(st.integers(1, 8000), min_size=6, max_size=6),
    polls_to_end=st.one_of(st.none(), st.integers(1, 6)),
    ready=st.lists(st.integers(1, 8), min_size=6, max_size=6),
    results=st.lists(outcomes, min_size=6, max_size=6),
    deadline=st.integers(1, 40),
)
def test_random_batch_nights_never_cross_the_cap_nor_buy_a_write_twice(
    n, cap, sizes, max_tokens, polls_to_end, ready, results, deadline
) -> None:
    """Whatever ends, errors, expires or is cancelled at the deadline, and whatever the cap:
    spend never crosses it (checked at every settle), each batched write is settled at the
    batch price once, and only the writes with no batch reply are bought interactively."""
    ids = [f"t{i}" for i in range(n)]
    requests = [_request(t, sizes[i], max_tokens[i]) for i, t in enumerate(ids)]
    script = SimBatchScript(
        polls_to_end,
        {t: ready[i] for i, t in enumerate(ids)},
        {t: results[i] for i, t in enumerate(ids)},
    )
    with tempfile.TemporaryDirectory() as tmp:
        store, vendor = _store(Path(tmp)), Vendor()
        budget = CappedBudget(cap)
        night = _night(store, SimBatch(vendor, script), budget, deadline=float(deadline))
        night.start(requests)
        night.poll()
        batched = {r.task_id for r in requests if store.recorded_reply(RUN, r) is not None}
        event(f"batched {min(len(batched), 2)}+ of {min(n, 2)}+")
        event("cancelled" if any(b.canceled for b in store.batch_log(RUN).batches()) else "ended")
        assert budget.reserved_run == 0  # every reservation settled or released
        caller = Caller({"sim": vendor}, PRICES, budget, store.call_log(RUN))
        bought = []
        for request in requests:
            try:
                caller.call(request)
            except BudgetExceeded:
                continue
            bought.append(request.task_id)
        price = PRICES.get(MODEL)
        for task_id in batched:
            (reply,) = [r for r in requests if r.task_id == task_id]
            recorded = store.recorded_reply(RUN, reply)
            usage = recorded.completion.usage
            assert recorded.cost_usd == cost(usage, price.at(ServiceTier.BATCH))
        store.close()
    assert sorted(vendor.calls) == sorted(batched | {c for c in bought if c not in batched})
    assert budget.spent_run <= cap


def test_a_night_started_after_its_deadline_submits_nothing(tmp_path) -> None:
    """A resume after the deadline re-attaches to what exists but starts no new batch."""
    store, vendor = _store(tmp_path), Vendor()
    batch = SimBatch(vendor, SimBatchScript(polls_to_end=1))
    budget = Budget(Decimal(10))

    waiting = _night(store, batch, budget, deadline=0.0).start([_request("a", 10, 100)])

    assert (waiting, batch.creates, budget.reserved_run) == (set(), 0, 0)


def test_one_batch_per_provider_and_model_split_at_the_vendors_limits(tmp_path) -> None:
    """Five writes to one model under a two-request limit make three batches, all recorded."""
    store, vendor = _store(tmp_path), Vendor()
    batch = SimBatch(vendor, SimBatchScript(polls_to_end=1))
    batch.limits = BatchLimits(max_requests=2, max_bytes=10**9)
    requests = [_request(f"t{i}", 10, 100) for i in range(5)]

    waiting = _night(store, batch, Budget(Decimal(10))).start(requests)

    recorded = store.batch_log(RUN).batches()
    assert (batch.creates, len(waiting)) == (3, 5)
    assert [len(b.entries) for b in recorded] == [2, 2, 1]
    assert [b.handle.display_name[-2:] for b in recorded] == ["#1", "#2", "#3"]


def test_a_recorded_entry_whose_prompt_changed_is_not_used(tmp_path) -> None:
    """A resume whose task inputs changed since the batch went out does not wait for it: a
    reply to the old prompt must never answer the new one."""
    store, vendor = _store(tmp_path), Vendor()
    state = tmp_path / "vendor.json"
    batch = SimBatch(vendor, SimBatchScript(polls_to_end=None), state=state)
    _night(store, batch, Budget(Decimal(10))).start([_request("a", 10, 100)])

    changed = _night(store, batch, Budget(Decimal(10))).start([_request("a", 11, 100)])

    assert (changed, batch.creates) == (set(), 1)


class Garbled(Vendor):
    """A vendor whose replies report negative cache reads (a garbled usage block)."""

    def complete(self, request: CallRequest) -> Completion:
        self.calls.append(request.task_id)
        usage = Usage(input_tokens=10, cache_read_tokens=-(10**9), output_tokens=5)
        return Completion("```python\nx = 1\n```", usage, StopReason.END, MODEL, "sim")


def test_a_batch_entry_with_impossible_usage_is_charged_its_reservation(tmp_path) -> None:
    """A batch result whose usage cannot be true settles at the entry's reservation (the
    batch-price worst case), not a negative amount that would crash the settle and leave
    the reservation held."""
    store = _store(tmp_path)
    budget = Budget(Decimal(10))
    request = _request("a", 100, 500)
    night = _night(store, SimBatch(Garbled(), SimBatchScript(polls_to_end=1)), budget)

    night.start([request])
    night.poll()

    worst = estimate_worst_case(
        request.prompt, request.route, PRICES.get(MODEL).at(ServiceTier.BATCH)
    )
    assert (worst, 0) == (budget.spent_run, budget.reserved_run)


def test_the_backoff_doubles_to_its_ceiling_and_stops_short_at_the_deadline() -> None:
    """BatchTiming.after: wait the interval (cut at the deadline, whole past it), then double it."""
    timing = BatchTiming(deadline=100.0, poll_s=30.0, max_poll_s=100.0)

    steps = [timing.after(30.0, 0.0), timing.after(60.0, 80.0), timing.after(100.0, 150.0)]

    assert steps == [(30.0, 60.0), (20.0, 100.0), (100.0, 100.0)]


def test_a_poll_step_process_reattaches_submits_nothing_and_lets_its_holds_go(tmp_path) -> None:
    """One step at a time (a Temporal night): attach re-attaches to the recorded batch without
    submitting, poll_once settles nothing before the vendor ends it, let_go frees the hold."""
    store, vendor = _store(tmp_path), Vendor()
    state = tmp_path / "vendor.json"
    script = SimBatchScript(polls_to_end=2)
    request = _request("a", 10, 100)
    _night(store, SimBatch(vendor, script, state=state), Budget(Decimal(10))).start([request])
    later, budget = SimBatch(vendor, script, state=state), Budget(Decimal(10))
    step = _night(store, later, budget)

    waiting = step.attach([request])
    first, held = step.poll_once(5.0), budget.reserved_run
    step.let_go()

    assert (waiting, later.creates, first, budget.reserved_run) == ({"a"}, 0, 5.0, Decimal(0))
    assert held > 0
    assert step.poll_once(5.0) is None
    assert store.call_log(RUN).recorded(request) is not None
