"""The fix prompt on a diet: what each block of its stable prefix buys, on the bench.

Each variant is the shipped loop with one block of the task's context left out of the fix
prompt alone (write, review and rewrite keep theirs), run on the record's task-nights and
paired with the shipped loop's own nights. A block pays when leaving it out costs more per
passing task, or passes fewer tasks, than keeping it. Three prices of each: the night as the
shipped defaults buy it (caching on, every step in batch rounds: bench/billing.py), the
same calls bought interactively with caching, and with caching off.

What the simulator models of a block in a fix prompt: gold examples and capability
signatures lift a fix's chance (`fix.context_lift`, assumed, swept); nothing else. The
legacy reference and the acceptance tests have no modelled effect on a fix, so their rows
price the tokens alone: a gain there is by construction, never a reason to cut the block.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from bench.billing import Billing, rebilled
from bench.fanout import fan_out
from bench.model import Night
from bench.policies import compare_pools
from harness.prompts import default_prompts_dir

__all__ = ["BLOCKS", "diet_stage", "prompts_without", "render_diet"]

# Variant → what the fix prompt's context is rendered with instead of the task's own.
BLOCKS: dict[str, dict[str, str]] = {
    "fix_no_examples": {"examples": "[]"},
    "fix_no_capabilities": {"capabilities": "none"},
    "fix_no_reference": {"references": "[]"},
    "fix_no_tests": {"tests": "[]"},
}
MODELLED = {"fix_no_examples": True, "fix_no_capabilities": True}
_STABLE = re.compile(r'\{% block stable %\}\{% include "_context\.md" %\}\{% endblock %\}')
SHIPPED = "harness"


def prompts_without(variant: str, into: Path) -> Path:
    """A copy of the shipped prompts/ whose fix templates render the context without the
    variant's block (the other steps' templates untouched)."""
    root = into / f"prompts-{variant}"
    if root.exists():
        return root
    shutil.copytree(default_prompts_dir(), root)
    names = ", ".join(f"{k}={v}" for k, v in BLOCKS[variant].items())
    lean = f'{{% block stable %}}{{% with {names} %}}{{% include "_context.md" %}}{{% endwith %}}'
    for fix in root.glob("*/fix.md"):
        text, found = _STABLE.subn(lean + "{% endblock %}", fix.read_text())
        if found != 1:
            raise ValueError(f"{fix}: no stable block including _context.md to put on a diet")
        fix.write_text(text)
    return root


def _variant_nights(st: Any, variant: str) -> list[Night]:
    root = prompts_without(variant, st.workdir)
    return [
        replace(st.harness(seed, 4, False, SHIPPED, prompts=(variant, root)), variant=variant)
        for seed in st.s.seeds
    ]


def _fix_input(nights: list[Night]) -> float:
    """Input tokens per fix call, fresh, written and read together."""
    calls = [c for n in nights for t in n.tasks for c in t.bill if c.step == "fix"]
    return sum(c.fresh + c.cache_write + c.cache_read for c in calls) / max(1, len(calls))


def diet_stage(st: Any, shipped: list[Night]) -> dict[str, Any] | None:
    """Every variant against the shipped loop's nights (same seeds, same tasks)."""
    if not st.s.diet:
        return None
    variants = list(BLOCKS)
    ran = fan_out(st, [partial(_variant_nights, variant=v) for v in variants])
    base = {(n.seed, t.id): t for n in shipped for t in n.tasks}
    billings = {
        "night": Billing.night(),
        "interactive": Billing(cache=True),
        "uncached": Billing(cache=False),
    }
    rows: dict[str, Any] = {}
    for variant, nights in zip(variants, ran, strict=True):
        mine = {(n.seed, t.id): t for n in nights for t in n.tasks}
        rows[variant] = {
            "left_out": BLOCKS[variant],
            "effect_modelled": MODELLED.get(variant, False),
            "fix_input_tokens": _fix_input(nights),
            **{
                name: compare_pools(rebilled(mine, b), rebilled(base, b))
                for name, b in billings.items()
            },
        }
    st.note("fix-prompt diet measured")
    return {
        "against": SHIPPED,
        "fix_input_tokens": _fix_input(shipped),
        "variants": rows,
    }


def _x(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}×"


def _span(v: list[float] | None) -> str:
    return "" if not v else f" [{v[0]:.2f}, {v[1]:.2f}]"


def render_diet(diet: dict[str, Any] | None) -> list[str]:
    """The diet as a table: each block left out of the fix prompt ÷ keeping it."""
    if not diet:
        return []
    head = (
        "| fix prompt without | effect on a fix modelled | fix input tokens | pass rate ÷ "
        "shipped | cost per pass ÷ shipped (night) | (interactive, cached) | (uncached) |"
    )
    out = [
        "### The fix prompt on a diet",
        "",
        "Each row: the shipped loop with one block of the task's context left out of the fix "
        "prompt alone, ÷ the shipped loop, paired over the same task-nights (90% bootstrap "
        "intervals). The shipped fix prompt carries "
        f"{diet['fix_input_tokens']:,.0f} input tokens a call.",
        "",
        head,
        "|---|---|---|---|---|---|---|",
    ]
    for row in diet["variants"].values():
        night, inter, unc = row["night"], row["interactive"], row["uncached"]
        out.append(
            f"| {', '.join(row['left_out'])} | {'yes' if row['effect_modelled'] else 'no'} "
            f"| {row['fix_input_tokens']:,.0f} "
            f"| {_x(night['pass_rate_ratio'])}{_span(night['pass_rate_ratio_interval'])} "
            f"| {_x(night['cost_per_pass_ratio'])}{_span(night['cost_per_pass_ratio_interval'])} "
            f"| {_x(inter['cost_per_pass_ratio'])} | {_x(unc['cost_per_pass_ratio'])} |"
        )
    out += [
        "",
        "*Only examples and capabilities have a modelled effect on a fix (`fix.context_lift`, "
        "assumed): a row marked no prices the tokens alone.*",
        "",
    ]
    return out
