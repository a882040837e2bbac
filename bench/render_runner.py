"""The test runner's part of the results document, as markdown: its micro-benchmark's output
verbatim, the isolation stage's table, and how many test runs the untimed nights took from
earlier runs (bench/memo.py)."""

from __future__ import annotations

from typing import Any

from bench.scale import render_scale

__all__ = ["render_isolation", "render_js_boundary", "render_runner"]


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
    if f.get("isolation"):
        out += render_isolation(f["isolation"])
    if f.get("js_boundary"):
        out += render_js_boundary(f["js_boundary"])
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


def _cell(x: dict[str, Any], fmt: str) -> str:
    if x["median"] is None:
        return "undefined (plain pytest's per-test cost measured ≤ 0)"
    return f"{x['median']:{fmt}} [{x['low']:{fmt}}–{x['high']:{fmt}}]"


def render_isolation(iso: dict[str, Any]) -> list[str]:
    """The isolation stage's table: seconds and ratio to plain pytest per size and mode, the
    per-test cost, and the issue's targets with the margin."""
    rows = [
        [
            f"{r['label']}",
            *(_cell(r["seconds"][m], ".2f") for m in ("plain", "in_process", "boundary")),
            *(_cell(r["ratio_to_plain"][m], ".2f") + "x" for m in ("in_process", "boundary")),
        ]
        for r in iso["sizes"]
    ]
    pt = iso["per_test"]
    rows.append(
        [
            "one more test (3 → 100), ms",
            *(_cell(pt["ms"][m], ".2f") for m in ("plain", "in_process", "boundary")),
            *(f"{_cell(pt['overhead'][m], '+.0%')} per test" for m in ("in_process", "boundary")),
        ]
    )
    head = ["suite", "plain s", "in_process s", "boundary s", "in_process/plain", "boundary/plain"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    targets = []
    for name, t in iso["targets"].items():
        fmt = "+.0%" if "overhead" in name else ".2f"  # a share, or a ratio
        if t["measured"] is None:
            targets.append(f"{name}: undefined this run (too noisy to tell)")
            continue
        over = t["measured"] - t["target"]
        verdict = "met" if t["met"] else f"NOT met (over by {over:{fmt}})"
        targets.append(f"{name} {t['measured']:{fmt}} (target ≤ {t['target']:{fmt}}): {verdict}")
    load = iso["load_average"]
    return [
        "### Isolation: boundary vs in_process vs plain pytest",
        "",
        f"`{iso['command']}`: medians of {iso['rounds']} interleaved rounds [90% bootstrap "
        f"interval], sandbox {iso['sandbox']}"
        + ("" if iso["boundary_in_effect"] else " (no bubblewrap: boundary ran in_process)")
        + f", load average {load[0]} → {load[1]}.",
        "",
        *lines,
        "",
        "Targets: " + "; ".join(targets) + ".",
        "",
    ]


def render_js_boundary(js: dict[str, Any]) -> list[str]:
    """The JavaScript boundary stage's table: seconds per mode, ratios to plain `node --test`
    (wall clock, and CPU where it was counted), and the target with the margin."""
    modes = ("plain", "in_process", "boundary")
    head = ["suite", "node --test s", "in_process s", "boundary s"]
    head += ["in_process/plain", "boundary/plain"]
    rows = [
        [
            js["suite"] + " (wall)",
            *(_cell(js["seconds"][m], ".2f") for m in modes),
            *(_cell(js["ratio_to_plain"][m], ".2f") + "x" for m in modes[1:]),
        ]
    ]
    if js.get("cpu_seconds"):
        rows.append(
            [
                js["suite"] + " (CPU, every process)",
                *(_cell(js["cpu_seconds"][m], ".2f") for m in modes),
                *(_cell(js["cpu_ratio_to_plain"][m], ".2f") + "x" for m in modes[1:]),
            ]
        )
    t = js["target"]
    if t["measured"] is None:
        target = "undefined this run (too noisy to tell)"
    else:
        verdict = "met" if t["met"] else f"NOT met (over by {t['measured'] - t['target']:.2f})"
        target = f"{t['measured']:.2f} (target ≤ {t['target']:.2f}): {verdict}"
    load = js["load_average"]
    pairing = f", {js['pairing']}" if js.get("pairing") else ""
    return [
        "### JavaScript: behind the boundary vs in the test process vs plain node --test",
        "",
        f"`{js['command']}`: medians of {js['rounds']} interleaved rounds [90% bootstrap "
        f"interval]{pairing}, sandbox {js['sandbox']}"
        + ("" if js["boundary_in_effect"] else " (no bubblewrap: boundary ran in_process)")
        + f", load average {load[0]} → {load[1]}.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + " --- |" * len(head),
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
        f"Target: boundary/plain (wall clock) {target}.",
        "",
    ]
