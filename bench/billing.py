"""A night's calls priced again under another billing: prompt caching on or off, and the
night in batch rounds (every step through the vendors' batch APIs, round after round, until
the night's deadline; harness/runner/batch/rounds.py).

Replies do not depend on billing (caching and batch change the price of a call, never its
answer: tests/runner/test_batch_rounds.py proves it for rounds on the simulator), so one
night's recorded calls (`TaskOutcome.bill`, usage at the list price with caching as the
night ran it) can be priced under each billing instead of running the night again. One
real rounds night per bench run checks the repricing to the micro-dollar
(`rounds_priced_as_a_real_rounds_night`).

The round model: every task sends its k-th call in round k (the round collector takes all
running tasks' next requests at once); round k is submitted at k x turnaround and ends at
(k+1) x turnaround; it is billed at the batch price if it ends by the night's deadline, else
it is cancelled and bought interactively, as is every later call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from bench.model import Call, Night, TaskOutcome
from harness.llm import ServiceTier, Usage
from harness.pricing import PriceTable, cost, load_prices

__all__ = ["ASSUMPTIONS", "Billing", "assumptions", "bill", "rebilled"]

ASSUMPTIONS = Path(__file__).resolve().parent / "billing.yaml"


@cache
def assumptions() -> dict[str, Any]:
    """The labelled billing settings and assumptions (bench/billing.yaml)."""
    return yaml.safe_load(ASSUMPTIONS.read_text())


@dataclass(frozen=True)
class Billing:
    """How calls are billed: caching on or off; batch rounds on or off, with the night's
    length, a round's turnaround and the share of cached prefix a batched call still reads."""

    cache: bool = True
    rounds: bool = False
    night_h: float = 8.0
    turnaround_h: float = 1.0
    batch_cache_hit: float = 0.5

    @classmethod
    def night(cls, **values: float) -> Billing:
        """Batch rounds and caching at the labelled centre values, some set otherwise."""
        data = assumptions()
        centre = {
            k: float(data[k]["value"]) for k in ("night_h", "turnaround_h", "batch_cache_hit")
        }
        return cls(cache=True, rounds=True, **{**centre, **values})

    def batched(self, k: int) -> bool:
        """Whether the task's k-th call (from 0) goes in a round that ends by the deadline."""
        return self.rounds and (k + 1) * self.turnaround_h <= self.night_h


def _usage(call: Call, billing: Billing, batched: bool) -> Usage:
    fresh, write, read = call.fresh, call.cache_write, call.cache_read
    if not billing.cache:
        return Usage(input_tokens=fresh + write + read, output_tokens=call.output)
    if batched and read:
        hit = round(read * billing.batch_cache_hit)
        write, read = write + read - hit, hit
    return Usage(
        input_tokens=fresh,
        cache_write_tokens=write,
        cache_read_tokens=read,
        output_tokens=call.output,
    )


def bill(calls: tuple[Call, ...], billing: Billing, prices: PriceTable) -> Decimal:
    """What a task's calls cost under `billing`, exactly."""
    total = Decimal(0)
    for k, call in enumerate(calls):
        batched = billing.batched(k)
        price = prices.get(call.model)
        if batched:
            price = price.at(ServiceTier.BATCH)
        total += cost(_usage(call, billing, batched), price)
    return total


def _task(task: TaskOutcome, billing: Billing, prices: PriceTable) -> TaskOutcome:
    return replace(task, cost_usd=float(bill(task.bill, billing, prices)))


def rebilled(
    pool: dict[Any, TaskOutcome], billing: Billing, prices: PriceTable | None = None
) -> dict[Any, TaskOutcome]:
    """The same task-nights, each costing what its calls cost under `billing`."""
    prices = prices or load_prices()
    return {k: _task(t, billing, prices) for k, t in pool.items()}


def night_rebilled(night: Night, billing: Billing, variant: str) -> Night:
    """A whole night priced under `billing`, as a night of its own variant."""
    prices = load_prices()
    tasks = tuple(_task(t, billing, prices) for t in night.tasks)
    return replace(night, variant=variant, tasks=tasks, spent_usd=sum(t.cost_usd for t in tasks))
