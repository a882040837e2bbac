"""summary.html: the morning summary for a browser, one self-contained file.

Same content and order as summary.md (totals, what needs a human, the task table), plus per
task an inline SVG chart and a table of its attempts (report._chart). No scripts, no external
assets, and a Content-Security-Policy that forbids both; every piece of text is escaped, since
task ids, reasons and warnings come from files and model replies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.report import facts
from harness.report.chart import el as _el
from harness.report.chart import esc as _e
from harness.report.chart import task_section
from harness.results import money

__all__ = ["render_html"]

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
.bar{fill:#6b8fb3}.bar.seed{fill:#9db8d3}.bar.best{fill:#2f7d32;stroke:#12401a;stroke-width:2}
.bar.best.unshipped{fill:#fff;stroke:#2f7d32;stroke-dasharray:3 2}
.attempts{width:auto;font-size:.9em;margin:.2rem 0 .6rem}
.attempts td,.attempts th{padding:.1rem .6rem}
.esc{color:#6a3ea1;font-weight:600}
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
    '<span><i class="sw" style="background:#9db8d3"></i>seed (from before this run)</span>'
    '<span><i class="sw" style="background:#2f7d32"></i>best, shipped</span>'
    '<span><i class="sw" style="outline:1.5px dashed #2f7d32"></i>best, not shipped</span>'
    '<span><i class="sw" style="background:#f3c7c7;outline:1.5px solid #c62828"></i>'
    'regressed, reverted</span><span><b style="color:#c62828">✗</b> no usable code</span>'
    "<span>⚠ tampering (scores 0)</span><span>- - - high-water mark</span></p>"
)


def _totals(data: Mapping[str, Any]) -> str:
    tasks, budget = data["tasks"], data["budget"]
    cap = money(budget["cap_usd"]) if budget["cap_usd"] is not None else "no cap"
    return (
        f'<p class="totals"><strong>{_e(facts.status_counts(tasks))}</strong> of {len(tasks)} '
        f"tasks · spent {money(budget['spent_usd'])} of {_e(cap)} · {facts.duration(data)} · "
        f'provider {_e(data["provider"])}</p><p class="activity">{_e(facts.activity(tasks))}</p>'
        + (
            f'<p class="batch">{_e(words)}</p>'
            if (words := facts.batch_words(data.get("batch")))
            else ""
        )
    )


def _attention_html(data: Mapping[str, Any]) -> str:
    items = []
    for kind, task_id, text in facts.attention(data):
        who = f'<a href="#task-{_e(task_id)}">{_e(task_id)}</a>: ' if task_id else ""
        tag = _el("span", _e(kind), cls="tag")
        items.append(_el("li", tag + who + _e(text), cls=f"attention {kind}"))
    return "<ul>" + "".join(items or ['<li class="nothing">nothing</li>']) + "</ul>"


def _row(t: Mapping[str, Any]) -> str:
    up = facts.escalated(t["attempts"])
    trail = " · ".join(facts.attempt_cell(a, up) for a in t["attempts"]) or "—"
    reason = " · ".join(r for r in (facts.seed_words(t), t["reason"]) if r)
    cells = (
        f'<a href="#task-{_e(t["id"])}">{_e(t["id"])}</a>',
        f'<span class="status s-{_e(t["status"])}">{_e(t["status"])}</span>',
        _e(facts.best_cell(t)),
        _e(facts.passed_cell(t)),
        money(t["cost_usd"]),
        _e(trail),
        _e(reason),
    )
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _table(data: Mapping[str, Any]) -> str:
    head = ("task", "status", "best", "passed", "cost", "attempts (n:passed/total tier cost)")
    return (
        "<table><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in (*head, "reason"))
        + "</tr></thead><tbody>"
        + "".join(_row(t) for t in data["tasks"])
        + "</tbody></table>"
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
        *(task_section(t) for t in summary["tasks"]), "</section></body></html>",
    ]  # fmt: skip
    return "\n".join(parts) + "\n"
