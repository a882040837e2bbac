"""summary.html: the morning summary for a browser, one self-contained file.

Same content and order as summary.md (totals, what needs a human, the task table), plus one
inline SVG chart per task of passed tests per attempt. No scripts, no external assets, and a
Content-Security-Policy that forbids both; every piece of text is escaped, since task ids,
reasons and warnings come from files and model replies.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator, Mapping
from html import escape
from typing import Any

from harness.report._md import passed_cell, tampering_note

__all__ = ["render_html"]

_H, _LEFT, _TOP, _BOTTOM, _STEP = 150, 34, 14, 24, 34

_CSS = """
body{font:15px/1.45 system-ui,sans-serif;color:#1d2329;margin:2rem auto;max-width:70rem;
padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .4rem}h2{margin-top:2rem;border-bottom:1px solid #d5dbe1}
.totals{font-size:1.05rem}.muted{color:#5c6670}code{font-size:.95em}
table{border-collapse:collapse;width:100%}
th,td{padding:.3rem .5rem;text-align:left;vertical-align:top}
th{border-bottom:2px solid #c7ced6}tr:nth-child(even) td{background:#f4f6f8}
.status{font-weight:600;padding:0 .35rem;border-radius:.25rem;color:#fff}
.s-passed{background:#2f7d32}.s-partial{background:#b26a00}.s-failed{background:#c62828}
.s-error{background:#7b1f1f}.s-guardrail{background:#6a3ea1}.s-skipped{background:#68737d}
.s-completed{background:#2f7d32}.s-budget_stopped{background:#b26a00}.s-interrupted{background:#c62828}
.tag{font-size:.8em;text-transform:uppercase;letter-spacing:.04em;color:#5c6670;margin-right:.4rem}
.task{margin:1.2rem 0;padding-top:.4rem;border-top:1px solid #e3e7eb}.task h3{margin:.2rem 0}
svg{display:block;margin:.4rem 0}svg text{font:11px system-ui,sans-serif;fill:#3b444c}
.bar{fill:#6b8fb3}.bar.best{fill:#2f7d32;stroke:#12401a;stroke-width:2}
.bar.regressed{fill:url(#hatch);stroke:#c62828;stroke-width:1.5}.bar.tampered{fill:#6a3ea1}
.gap line{stroke:#c62828;stroke-width:2.5}.ratchet{fill:none;stroke:#2f7d32;stroke-dasharray:4 3}
.axis{stroke:#9aa4ad}.total{stroke:#9aa4ad;stroke-dasharray:2 3}
.legend span{margin-right:1rem;white-space:nowrap}.sw{display:inline-block;width:.8rem;height:.8rem;
margin-right:.3rem;vertical-align:-.1rem}
"""

# Nothing may load or run: the page is data from files and models, rendered offline.
_CSP = "default-src 'none'; style-src 'unsafe-inline'"

# Defined once per page: every chart's reverted bars use it, and ids must be unique.
_DEFS = (
    '<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>'
    '<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect width="6" height="6" fill="#f3c7c7"/>'
    '<line x1="0" y1="0" x2="0" y2="6" stroke="#c62828" stroke-width="2"/></pattern></defs></svg>'
)

_LEGEND = (
    '<p class="legend muted"><span><i class="sw" style="background:#6b8fb3"></i>passed tests</span>'
    '<span><i class="sw" style="background:#2f7d32"></i>best (shipped)</span>'
    '<span><i class="sw" style="background:#f3c7c7;outline:1.5px solid #c62828"></i>'
    'regressed, reverted</span><span><b style="color:#c62828">✗</b> no usable code</span>'
    "<span>⚠ tampering (scores 0)</span><span>- - - high-water mark</span></p>"
)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _duration(data: Mapping[str, Any]) -> str:
    start = dt.datetime.fromisoformat(data["started_at"])
    seconds = int((dt.datetime.fromisoformat(data["finished_at"]) - start).total_seconds())
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m{seconds % 60:02d}s"


def _totals(data: Mapping[str, Any]) -> str:
    tasks, budget = data["tasks"], data["budget"]
    counts = Counter(t["status"] for t in tasks)
    cap = f"${budget['cap_usd']:.2f}" if budget["cap_usd"] is not None else "no cap"
    main = f"{counts['passed']} passed, {counts['partial']} partial, {counts['failed']} failed"
    main += "".join(f", {counts[s]} {s}" for s in ("error", "guardrail", "skipped") if counts[s])
    return (
        f'<p class="totals"><strong>{_e(main)}</strong> of {len(tasks)} tasks · spent '
        f"${budget['spent_usd']:.4f} of {_e(cap)} · {_duration(data)} · provider "
        f"{_e(data['provider'])}</p>"
    )


def _attention(data: Mapping[str, Any]) -> Iterator[tuple[str, str | None, str]]:
    """(kind, task id or None, text): the same items, in the same order, as summary.md."""
    for note in data.get("notes", []):
        yield "note", None, note
    for t in data["tasks"]:
        reverted = [str(a["n"]) for a in t["attempts"] if a["regressed"]]
        if reverted:
            yield "regression", t["id"], f"regression reverted at attempt(s) {', '.join(reverted)}"
        if t["status"] in ("guardrail", "error"):
            yield t["status"], t["id"], f"{t['status']}: {t['reason']}"
        elif t["status"] == "skipped" and t["reason"].startswith("budget"):
            yield "budget", t["id"], f"skipped: {t['reason']}"
        if any(a.get("tampered") for a in t["attempts"]):
            yield "tampering", t["id"], tampering_note(t)
        for warning in t.get("warnings", []):
            yield "warning", t["id"], f"warning: {warning}"


def _attention_html(data: Mapping[str, Any]) -> str:
    items = []
    for kind, task_id, text in _attention(data):
        who = f'<a href="#task-{_e(task_id)}">{_e(task_id)}</a>: ' if task_id else ""
        tag = _el("span", _e(kind), cls="tag")
        items.append(_el("li", tag + who + _e(text), cls=f"attention {kind}"))
    return "<ul>" + "".join(items or ['<li class="nothing">nothing</li>']) + "</ul>"


def _trail(attempts: list[dict[str, Any]]) -> str:
    cells = []
    for a in attempts:
        if a["extraction_error"]:
            cells.append(f"{a['n']}:✗")
        else:
            cells.append(f"{a['n']}:{a['passed']}/{a['total']}" + ("↩" if a["regressed"] else ""))
    return " ".join(cells) or "—"


def _row(t: Mapping[str, Any]) -> str:
    best = t["best_attempt"] if t["best_attempt"] is not None else "—"
    cells = (
        f'<a href="#task-{_e(t["id"])}">{_e(t["id"])}</a>',
        f'<span class="status s-{_e(t["status"])}">{_e(t["status"])}</span>',
        _e(best),
        _e(passed_cell(t)),
        f"${t['cost_usd']:.4f}",
        _e(_trail(t["attempts"])),
        _e(t["reason"] or ""),
    )
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _table(data: Mapping[str, Any]) -> str:
    head = ("task", "status", "best", "passed", "cost", "attempts (passed/total)", "reason")
    return (
        "<table><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(_row(t) for t in data["tasks"])
        + "</tbody></table>"
    )


def _el(tag: str, body: str = "", **attrs: object) -> str:
    """An element with escaped attributes (`cls` → class, `data_n` → data-n)."""
    names = {"cls": "class", "anchor": "text-anchor"}
    pairs = "".join(f' {names.get(k, k.replace("_", "-"))}="{_e(v)}"' for k, v in attrs.items())
    return (
        f"<{tag}{pairs}/>"
        if not body and tag in ("line", "polyline")
        else f"<{tag}{pairs}>{body}</{tag}>"
    )


def _cross(a: Mapping[str, Any], x: float, y0: float) -> str:
    tip = f"attempt {a['n']} ({a['kind']}): no usable code: {a['extraction_error']}"
    down = _el("line", x1=x - 6, y1=y0 - 14, x2=x + 6, y2=y0 - 2)
    up = _el("line", x1=x - 6, y1=y0 - 2, x2=x + 6, y2=y0 - 14)
    return _el("g", _el("title", _e(tip)) + down + up, cls="gap", data_n=a["n"])


def _bar(a: Mapping[str, Any], x: float, y0: float, scale: float, best: int | None) -> str:
    if a["extraction_error"]:
        return _cross(a, x, y0)
    n, tampered, regressed = a["n"], bool(a.get("tampered")), bool(a["regressed"])
    classes = ["bar"] + ["best"] * (n == best) + ["regressed"] * regressed + ["tampered"] * tampered
    tip = f"attempt {n} ({a['kind']}): {a['passed']}/{a['total']} passed"
    tip += ", regressed: reverted" * regressed + ", best" * (n == best)
    tip += ", tampering detected" * tampered
    height = max(a["passed"] * scale, 1.5)
    top = round(y0 - height, 1)
    rect = _el(
        "rect",
        _el("title", _e(tip)),
        cls=" ".join(classes),
        data_n=n,
        x=x - 11,
        y=top,
        width=22,
        height=round(height, 1),
    )
    label = _el("text", _e("⚠" if tampered else a["passed"]), x=x, y=top - 3, anchor="middle")
    return rect + label


def _ratchet(attempts: list[dict[str, Any]], y0: float, scale: float) -> str:
    """The high-water mark: what the ratchet held after each attempt."""
    points, high = [], None
    for i, a in enumerate(attempts):
        if not a["extraction_error"] and not a.get("tampered"):
            high = max(high or 0, a["passed"])
        if high is not None:
            y = round(y0 - high * scale, 1)
            points.append(f"{_LEFT + _STEP * i + 6},{y} {_LEFT + _STEP * (i + 1) - 6},{y}")
    return _el("polyline", cls="ratchet", points=" ".join(points)) if points else ""


def _chart(t: Mapping[str, Any]) -> str:
    attempts = t["attempts"]
    top = max([t["total"], 1] + [a["total"] for a in attempts])
    width, y0 = _LEFT + _STEP * max(len(attempts), 4) + 12, _H - _BOTTOM
    scale = (y0 - _TOP) / top
    parts = [
        _el("line", cls="axis", x1=_LEFT, y1=y0, x2=width - 6, y2=y0),
        _el("line", cls="total", x1=_LEFT, y1=_TOP, x2=width - 6, y2=_TOP),
        _el("text", str(top), x=_LEFT - 4, y=_TOP + 4, anchor="end"),
        _el("text", "0", x=_LEFT - 4, y=y0, anchor="end"),
    ]
    for i, a in enumerate(attempts):
        x = _LEFT + _STEP * i + _STEP / 2
        parts.append(_bar(a, x, y0, scale, t["best_attempt"]))
        parts.append(_el("text", str(a["n"]), x=x, y=y0 + 15, anchor="middle"))
    parts.append(_ratchet(attempts, y0, scale))
    title = _el("title", _e(f"{t['id']}: passed tests per attempt (of {top})"))
    box = f"0 0 {width} {_H}"
    return _el("svg", title + "".join(parts), role="img", width=width, height=_H, viewBox=box)


def _task(t: Mapping[str, Any]) -> str:
    best = t["best_attempt"]
    if best is None:
        note = "no candidate to ship" if t["attempts"] else "not run"
    elif any(a["n"] == best for a in t["attempts"]):
        note = f"best: attempt {best}, {t['passed']}/{t['total']} passed"
    else:
        note = f"best: carried over from an earlier run, {t['passed']}/{t['total']} passed"
    reason = f" · {_e(t['reason'])}" if t["reason"] else ""
    chart = _chart(t) if t["attempts"] else '<p class="muted">no attempts in this run</p>'
    return (
        f'<article class="task" id="task-{_e(t["id"])}"><h3>{_e(t["id"])} '
        f'<span class="status s-{_e(t["status"])}">{_e(t["status"])}</span></h3>'
        f'<p class="muted">{_e(note)}{reason}</p>{chart}</article>'
    )


def render_html(summary: Mapping[str, Any]) -> str:
    """The whole page for one summary.json document (schema 1)."""
    run_id, status = _e(summary["run_id"]), _e(summary["status"])
    head = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        f"<title>Run {run_id} — {status}</title><style>{_CSS}</style></head>"
    )
    badge = _el("span", status, cls=f"status s-{summary['status']}")
    parts = [
        head, f"<body><header><h1>Run <code>{run_id}</code> {badge}</h1>", _totals(summary),
        '</header><section id="attention"><h2>Needs a human</h2>', _attention_html(summary),
        '</section><section id="tasks"><h2>Tasks</h2>', _table(summary),
        f'</section><section id="charts"><h2>Attempts</h2>{_DEFS}{_LEGEND}',
        *(_task(t) for t in summary["tasks"]), "</section></body></html>",
    ]  # fmt: skip
    return "\n".join(parts) + "\n"
