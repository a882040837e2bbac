"""One task's section of summary.html: an inline SVG of passed tests per attempt (the seed
first, when the task started from one) and a table of every attempt's tier and cost.

Every piece of text is escaped: task ids, reasons and errors come from files and models.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from harness.report import facts
from harness.results import money

__all__ = ["el", "esc", "task_section"]

_H, _LEFT, _TOP, _BOTTOM, _STEP = 150, 34, 14, 24, 34

Slot = Mapping[str, Any]  # an attempt of summary.json, or the seed shaped like one (n = 0)


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def el(tag: str, body: str = "", **attrs: object) -> str:
    """An element with escaped attributes (`cls` → class, `data_n` → data-n)."""
    names = {"cls": "class", "anchor": "text-anchor"}
    pairs = "".join(f' {names.get(k, k.replace("_", "-"))}="{esc(v)}"' for k, v in attrs.items())
    return (
        f"<{tag}{pairs}/>"
        if not body and tag in ("line", "polyline")
        else f"<{tag}{pairs}>{body}</{tag}>"
    )


def _slots(t: Mapping[str, Any]) -> list[Slot]:
    """What the chart draws, left to right: the seed (re-tested tonight), then the attempts."""
    seed = t.get("seed")
    head = []
    if seed:
        head = [
            {**seed, "n": 0, "kind": "seed", "extraction_error": None, "regressed": False}
            | {"tier": "", "cost_usd": 0.0}
        ]
    return head + list(t["attempts"])


def _what(a: Slot, t: Mapping[str, Any], up: frozenset[int]) -> str:
    """Which candidate a slot is: the seed and its origin, or the attempt, tier and cost."""
    if a["kind"] == "seed":
        return f"seed, {facts.seed_words(t)} (re-tested, no paid call)"
    escalation = ", escalated" if a["n"] in up else ""
    tier = a.get("tier") or "?"
    return f"attempt {a['n']} ({a['kind']}, {tier}{escalation}, {money(a['cost_usd'])})"


def _outcome(a: Slot, t: Mapping[str, Any]) -> str:
    """What the slot scored and what became of it: reverted, best (shipped or not)."""
    if a["extraction_error"]:
        return f"no usable code: {a['extraction_error']}"
    text = f"{a['passed']}/{a['total']} passed" + ", regressed: reverted" * bool(a["regressed"])
    if a["n"] == t["best_attempt"]:
        text += ", best, shipped" if t["output"] is not None else ", best, not shipped"
    return text + ", tampering detected" * bool(a.get("tampered"))


def _describe(a: Slot, t: Mapping[str, Any], up: frozenset[int]) -> str:
    return f"{_what(a, t, up)}: {_outcome(a, t)}"


def _cross(a: Slot, tip: str, x: float, y0: float) -> str:
    down = el("line", x1=x - 6, y1=y0 - 14, x2=x + 6, y2=y0 - 2)
    up = el("line", x1=x - 6, y1=y0 - 2, x2=x + 6, y2=y0 - 14)
    return el("g", el("title", esc(tip)) + down + up, cls="gap", data_n=a["n"])


def _bar(a: Slot, t: Mapping[str, Any], x: float, y0: float, scale: float, tip: str) -> str:
    if a["extraction_error"]:
        return _cross(a, tip, x, y0)
    n, tampered, best = a["n"], bool(a.get("tampered")), a["n"] == t["best_attempt"]
    classes = ["bar"] + ["seed"] * (a["kind"] == "seed") + ["best"] * best
    classes += [("shipped" if t["output"] is not None else "unshipped")] * best
    classes += ["regressed"] * bool(a["regressed"]) + ["tampered"] * tampered
    height = max(a["passed"] * scale, 1.5)
    top = round(y0 - height, 1)
    rect = el(
        "rect",
        el("title", esc(tip)),
        cls=" ".join(classes),
        data_n=n,
        x=x - 11,
        y=top,
        width=22,
        height=round(height, 1),
    )
    label = el("text", esc("⚠" if tampered else a["passed"]), x=x, y=top - 3, anchor="middle")
    return rect + label


def _ratchet(slots: list[Slot], y0: float, scale: float) -> str:
    """The high-water mark: what the ratchet held after each slot."""
    points, high = [], None
    for i, a in enumerate(slots):
        if not a["extraction_error"] and not a.get("tampered"):
            high = max(high or 0, a["passed"])
        if high is not None:
            y = round(y0 - high * scale, 1)
            points.append(f"{_LEFT + _STEP * i + 6},{y} {_LEFT + _STEP * (i + 1) - 6},{y}")
    return el("polyline", cls="ratchet", points=" ".join(points)) if points else ""


def _chart(t: Mapping[str, Any], slots: list[Slot], up: frozenset[int]) -> str:
    top = max([t["total"], 1] + [a["total"] for a in slots])
    width, y0 = _LEFT + _STEP * max(len(slots), 4) + 12, _H - _BOTTOM
    scale = (y0 - _TOP) / top
    parts = [
        el("line", cls="axis", x1=_LEFT, y1=y0, x2=width - 6, y2=y0),
        el("line", cls="total", x1=_LEFT, y1=_TOP, x2=width - 6, y2=_TOP),
        el("text", str(top), x=_LEFT - 4, y=_TOP + 4, anchor="end"),
        el("text", "0", x=_LEFT - 4, y=y0, anchor="end"),
    ]
    for i, a in enumerate(slots):
        x = _LEFT + _STEP * i + _STEP / 2
        parts.append(_bar(a, t, x, y0, scale, _describe(a, t, up)))
        label = "seed" if a["kind"] == "seed" else str(a["n"]) + "↑" * (a["n"] in up)
        parts.append(el("text", esc(label), x=x, y=y0 + 15, anchor="middle"))
    parts.append(_ratchet(slots, y0, scale))
    title = el("title", esc(f"{t['id']}: passed tests per attempt (of {top})"))
    box = f"0 0 {width} {_H}"
    return el("svg", title + "".join(parts), role="img", width=width, height=_H, viewBox=box)


def _attempt_row(a: Slot, t: Mapping[str, Any], up: frozenset[int]) -> str:
    seed = a["kind"] == "seed"
    tier = esc(a.get("tier") or "—")
    if a["n"] in up:
        tier = f'<span class="esc">{tier} ↑ escalated</span>'
    score = "no usable code" if a["extraction_error"] else f"{a['passed']}/{a['total']}"
    cells = (
        "seed" if seed else esc(a["n"]),
        esc(facts.seed_words(t) if seed else a["kind"]),
        tier,
        esc(score),
        "—" if seed else money(a["cost_usd"]),
        esc(_outcome(a, t)),
    )
    return f'<tr data-n="{esc(a["n"])}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _attempts_table(t: Mapping[str, Any], slots: list[Slot], up: frozenset[int]) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("n", "kind", "tier", "passed", "cost", "outcome"))
    rows = "".join(_attempt_row(a, t, up) for a in slots)
    return f'<table class="attempts"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def task_section(t: Mapping[str, Any]) -> str:
    """One task: its status, a sentence on its best candidate, the chart and the attempts."""
    slots, up = _slots(t), facts.escalated(t["attempts"])
    reason = f" · {esc(t['reason'])}" if t["reason"] else ""
    body = (
        _chart(t, slots, up) + _attempts_table(t, slots, up)
        if slots
        else '<p class="muted">no attempts in this run</p>'
    )
    return (
        f'<article class="task" id="task-{esc(t["id"])}"><h3>{esc(t["id"])} '
        f'<span class="status s-{esc(t["status"])}">{esc(t["status"])}</span></h3>'
        f'<p class="muted note">{esc(facts.best_note(t))}{reason}</p>{body}</article>'
    )
