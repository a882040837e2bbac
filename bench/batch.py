"""Batch mode on vs off, side by side on the same task-nights.

A batch night asks the simulator exactly what an interactive one asks and gets the same
replies (tests/runner/test_batch.py proves it end to end), so on and off differ only in price and
timing: the "on" figures reprice each interactive night's attempt-1 writes at the batch
price instead of running every night twice. One real batch night per bench run checks that
repricing against what batch mode actually spends (`batch_priced_as_a_real_batch_night`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.model import Night, TaskOutcome
from harness.llm import ServiceTier, Usage
from harness.pricing import PriceError, PriceTable, cost, load_prices

__all__ = [
    "BATCH_CONFIG",
    "BATCH_VARIANT",
    "ROUNDS_CONFIG",
    "ROUNDS_VARIANT",
    "batch_figures",
    "first_write_savings",
    "rounds_figures",
]

BATCH_VARIANT = "harness_batch_check"
BATCH_CONFIG = (
    'batch: {enabled: true, steps: [write], deadline: "2h", poll_s: 0.01, max_poll_s: 0.05}\n'
)
# One real night in batch rounds (every step through sim.SimBatch), to check bench/billing.py.
ROUNDS_VARIANT = "harness_rounds_check"
ROUNDS_CONFIG = (
    'batch: {enabled: true, steps: [write, review, rewrite, fix], deadline: "2h",'
    " poll_s: 0.01, max_poll_s: 0.05, round_window_s: 0.2}\n"
)


def first_write_savings(
    db: Path, run_id: str, prices: PriceTable | None = None
) -> dict[str, float]:
    """Per task: list price minus batch price of its attempt-1 write (what batch mode saves);
    nothing for a model with no batch price (a named endpoint's: it has no batch API)."""
    prices = prices or load_prices()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT task_id, provider, model, input_tokens, cache_write_tokens, cache_read_tokens,"
            " output_tokens FROM calls WHERE run_id=? AND step='write' AND attempt=1"
            " AND stop_reason NOT IN ('in_flight', 'error')",
            (run_id,),
        ).fetchall()
    finally:
        conn.close()
    saved: dict[str, Decimal] = {}
    for task_id, provider, model, *tokens in rows:
        usage = Usage(*tokens)
        try:
            price = prices.get(model, provider)
            delta = cost(usage, price) - cost(usage, price.at(ServiceTier.BATCH))
        except PriceError:
            continue
        saved[task_id] = saved.get(task_id, Decimal(0)) + delta
    return {k: float(v) for k, v in saved.items()}


def _batched(task: TaskOutcome) -> TaskOutcome:
    return replace(task, cost_usd=task.cost_usd - task.batch_saving_usd)


def batch_figures(
    nights: Sequence[Night], check: Night | None, compare: Any
) -> dict[str, Any] | None:
    """Cost per passing task with batch mode off and on (paired intervals over the same
    (seed, task) task-nights), and the real batch night against its repriced twin."""
    off = {(n.seed, t.id): t for n in nights if n.variant == "harness" for t in n.tasks}
    if not off:
        return None
    on = {k: _batched(t) for k, t in off.items()}
    out: dict[str, Any] = {"on_vs_off": compare(on, off), "off": compare(off, off)}
    if check is not None:
        twin = next((n for n in nights if n.variant == "harness" and n.seed == check.seed), None)
        repriced = sum(_batched(t).cost_usd for t in twin.tasks) if twin else None
        out["real_batch_night"] = {
            "seed": check.seed,
            "spent_usd": check.spent_usd,
            "repriced_twin_usd": repriced,
            "same_outcomes": twin is not None
            and [t.shipped_passed for t in twin.tasks] == [t.shipped_passed for t in check.tasks],
        }
    return out


def rounds_figures(nights: Sequence[Night], check: Night | None) -> dict[str, Any] | None:
    """A real night in batch rounds on the simulator (every round submitted and ended at
    once: nothing past the deadline, every cached prefix read) against its interactive twin
    priced by bench/billing.py under the same billing; and every night's recorded calls
    priced as it ran, against what it spent (the repricing reproduces the spend)."""
    from bench.billing import Billing, bill

    prices = load_prices()
    out: dict[str, Any] = {}
    as_ran = []
    for n in nights:
        billing = Billing(cache=not n.variant.startswith("baseline"))
        if n.variant.endswith("_uncached") or n.variant == "harness_no_prompt_cache":
            continue  # their Gemini review stays cached on its own: not one billing
        if n.cap_usd is not None and n.stopped:
            continue
        repriced = sum(float(bill(t.bill, billing, prices)) for t in n.tasks)
        as_ran.append(abs(repriced - n.spent_usd) < 1e-6 * max(1, len(n.tasks)))
    out["calls_repriced_as_they_ran"] = {"nights": len(as_ran), "equal": sum(as_ran)}
    if check is not None:
        twin = next((n for n in nights if n.variant == "harness" and n.seed == check.seed), None)
        every = Billing(cache=True, rounds=True, night_h=1e9, turnaround_h=1, batch_cache_hit=1)
        repriced = sum(float(bill(t.bill, every, prices)) for t in twin.tasks) if twin else None
        out["real_rounds_night"] = {
            "seed": check.seed,
            "spent_usd": check.spent_usd,
            "repriced_twin_usd": repriced,
            "same_outcomes": twin is not None
            and [t.shipped_passed for t in twin.tasks] == [t.shipped_passed for t in check.tasks],
        }
    return out
