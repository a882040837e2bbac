"""The sweep's ends reach the simulator: `review.rewrite_fixes`, whose rows gave the same
figures at both ends on a 12-task night, is read by every rewrite (its nights had too few
rewrites whose draw fell between the ends; docs/benchmarks.md)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.sensitivity import labels  # noqa: E402
from harness.sim import SimModel, SimProvider  # noqa: E402
from tests.sim.test_provider import ask, carts, code_of  # noqa: E402


def _shrinking_rewrites(end: str, seeds: range) -> int:
    """Rewrites that remove a bug from a buggy draft, the model at one end of the range."""
    model = SimModel.shipped().with_values(labels()["review.rewrite_fixes"]["range"][end])
    shrank = 0
    for seed in seeds:
        sim = SimProvider({"carts": carts()}, seed=seed, model=model)
        draft = code_of(ask(sim, "write", 1)) or ""
        before = sim.known_mutations("carts", draft)
        after = sim.known_mutations("carts", code_of(ask(sim, "rewrite", 1, draft)) or "")
        shrank += bool(before) and after is not None and len(after) < len(before)
    return shrank


def test_rewrite_fixes_is_read_at_both_ends_of_its_sweep() -> None:
    """The same drafts and draws: the high end's rewrites fix more bugs than the low end's."""
    seeds = range(120)

    low, high = _shrinking_rewrites("low", seeds), _shrinking_rewrites("high", seeds)

    assert 0 < low < high
