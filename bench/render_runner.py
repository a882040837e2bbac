"""The test runner's part of the results document, as markdown: its micro-benchmark's output
verbatim, and how many test runs the untimed nights took from earlier runs (bench/memo.py)."""

from __future__ import annotations

from typing import Any

from bench.scale import render_scale

__all__ = ["render_runner"]


def render_runner(f: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if f.get("sandbox_bench"):
        sb = f["sandbox_bench"]
        out += [
            "### Test runner (bench/bench_sandbox.py, verbatim)",
            "",
            "```",
            f"$ {sb['command']}",
            sb["output"],
            "```",
            "",
        ]
    return out + render_scale(f.get("scale")) + _memo(f.get("test_memo") or {})


def _memo(memo: dict[str, Any]) -> list[str]:
    """How many test runs the untimed nights took from earlier runs (bench/memo.py)."""
    if not memo:
        return []
    parts = [
        f"{kind} {m['hits'] - m['verified_hits']} of {m['runs'] + m['hits'] - m['verified_hits']}"
        f" ({m['verified_hits']} more re-run and compared: {len(m['mismatches'])} differed)"
        for kind, m in memo.items()
    ]
    line = "; ".join(parts)
    return [f"Test results reused by the untimed nights (same tests, same code): {line}.", ""]
