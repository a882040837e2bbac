"""summary.html: same content as summary.md, a chart per task, escaped, self-contained."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import zlib
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from harness.report import RunSummary, render_html, render_markdown
from harness.results import AttemptRecord, RunStatus, StopCause, TaskResult, TaskStatus

START = dt.datetime(2026, 5, 12, 2, 15, tzinfo=dt.UTC)
HOSTILE = "<script>alert(1)</script>"


def summary() -> dict[str, Any]:
    """A night with something in every 'needs a human' category."""
    orders = TaskResult(
        "orders",
        TaskStatus.PARTIAL,
        "no improvement in 2 attempts",
        3,
        15,
        2,
        0,
        17,
        Decimal("1.2345"),
        "/x/out/orders_service.py",
        (
            AttemptRecord(1, "write", 8, 9, 0, 17, Decimal("0.2"), improved=True),
            AttemptRecord(
                2, "fix", cost_usd=Decimal("0.3"), extraction_error="reply ended with max_tokens"
            ),
            AttemptRecord(3, "fix", 15, 2, 0, 17, Decimal("0.3"), improved=True),
            AttemptRecord(4, "fix", 11, 6, 0, 17, Decimal("0.4"), regressed=True),
        ),
        ("uses time.sleep in a handler",),
    )
    users = TaskResult(
        "users",
        TaskStatus.PASSED,
        "",
        2,
        9,
        0,
        0,
        9,
        Decimal("0.31"),
        "/x/out/u.py",
        (AttemptRecord(1, "write", 6, 3, 0, 9), AttemptRecord(2, "fix", 9, 0, 0, 9)),
    )
    hostile = TaskResult(
        HOSTILE,
        TaskStatus.GUARDRAIL,
        'forbidden `os.system("x")` & <b>',
        None,
        attempts=(AttemptRecord(1, "write", 0, 0, 4, 4, tampered=True),),
    )
    budget = TaskResult(
        "wallets", TaskStatus.SKIPPED, "budget: run cap reached", cause=StopCause.BUDGET
    )
    crashed = TaskResult("refunds", TaskStatus.ERROR, "provider: anthropic transient (HTTP 529)")
    return RunSummary(
        "20260512-021500-ab12",
        START,
        START + dt.timedelta(hours=1, seconds=7),
        RunStatus.BUDGET_STOPPED,
        "live",
        Decimal(30),
        Decimal("29.87"),
        (orders, users, hostile, budget, crashed),
        notes=("tests ran without bubblewrap",),
    ).to_json()


class _Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: _Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[_Node] = []
        self.parts: list[str | _Node] = []  # text and elements, in document order

    def all(self, tag: str, cls: str | None = None) -> list[_Node]:
        found = [
            c
            for c in self.children
            if c.tag == tag and (cls is None or cls in (c.attrs.get("class") or "").split())
        ]
        return found + [n for c in self.children for n in c.all(tag, cls)]

    def content(self) -> str:
        return "".join(p if isinstance(p, str) else p.content() for p in self.parts)


_VOID = frozenset({"meta", "br", "img", "link", "input"})  # no end tag in HTML


class _Tree(HTMLParser):
    """Just enough DOM: elements, attributes, text (void elements closed at once)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.root = self.current = _Node("#root", {}, None)
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        self.current.parts.append(node)
        if tag not in _VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node = self.current
        while node.parent is not None and node.tag != tag:
            node = node.parent
        if node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.parts.append(data)


def _tree() -> _Node:
    return _Tree(render_html(summary())).root


def _chart(root: _Node, task_id: str) -> _Node:
    (article,) = [a for a in root.all("article") if a.attrs.get("id") == f"task-{task_id}"]
    (svg,) = article.all("svg")
    return svg


def test_sections_come_in_the_morning_order() -> None:
    """Totals, then what needs a human, then the table, then the charts."""
    root = _tree()
    headings = [h.content() for h in root.all("h2")]

    assert (
        headings,
        "1 passed, 1 partial, 0 failed, 1 error, 1 guardrail, 1 skipped" in root.content(),
    ) == (["Needs a human", "Tasks", "Attempts"], True)


def test_attention_items_match_the_markdown() -> None:
    """Every 'needs a human' line of summary.md is in the HTML, in the same order."""
    data = summary()
    markdown = render_markdown(data).split("## Needs a human")[1].split("## Tasks")[0]
    expected = [line[2:] for line in markdown.splitlines() if line.startswith("- ")]
    items = _tree().all("li", "attention")
    texts = [li.content().removeprefix(li.all("span", "tag")[0].content()) for li in items]

    assert expected == texts


def test_table_has_one_row_per_task() -> None:
    """The per-task table lists every task with its status and attempt trail."""
    (table,) = _tree().all("table")
    rows = [[td.content() for td in tr.all("td")] for tr in table.all("tbody")[0].all("tr")]

    assert (
        rows[0][:6],
        len(rows),
    ) == (["orders", "partial", "3", "15/17", "$1.2345", "1:8/17 2:✗ 3:15/17 4:11/17↩"], 5)


def test_chart_marks_best_reverted_and_missing_code() -> None:
    """Bars of passed tests; best and reverted attempts marked; no-code replies drawn as a cross."""
    svg = _chart(_tree(), "orders")
    bars = {r.attrs["data-n"]: set(r.attrs["class"].split()) for r in svg.all("rect")}

    assert ({"1": {"bar"}, "3": {"bar", "best"}, "4": {"bar", "regressed"}}, ["2"]) == (
        bars,
        [g.attrs["data-n"] for g in svg.all("g", "gap")],
    )


def test_hostile_text_is_escaped() -> None:
    """Task ids and reasons from files and models never become markup."""
    root = _tree()

    assert (
        root.all("script"),
        HOSTILE in root.content(),
        'os.system("x")` & <b>' in root.content(),
    ) == ([], True, True)


def test_page_is_self_contained() -> None:
    """No scripts and nothing fetched: only in-page links, and a CSP that forbids the rest."""
    root = _tree()
    refs = [
        v
        for n in root.all("a") + root.all("link") + root.all("img")
        for k, v in n.attrs.items()
        if k in ("href", "src")
    ]
    (csp,) = [m for m in root.all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]

    assert (
        all(r.startswith("#task-") for r in refs),
        csp.attrs["content"].startswith("default-src 'none'"),
    ) == (True, True)


def test_best_carried_over_from_an_earlier_run_is_said() -> None:
    """A best attempt that is not in this run (seeded from an earlier night) is explained."""
    data = summary()
    data["tasks"][1]["best_attempt"] = 0

    assert "carried over from an earlier run" in render_html(data)


def _png_pixels_vary(png: bytes) -> bool:
    """Decompressed image data with many distinct byte values: not a blank page."""
    chunks, at = [], 8
    while at < len(png):
        length = int.from_bytes(png[at : at + 4], "big")
        if png[at + 4 : at + 8] == b"IDAT":
            chunks.append(png[at + 8 : at + 8 + length])
        at += 12 + length
    return len(set(zlib.decompress(b"".join(chunks)))) > 32


CHROMIUM = next(
    (c for c in ("chromium", "chromium-browser", "google-chrome") if shutil.which(c)), None
)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed")
def test_renders_in_headless_chromium(tmp_path: Path) -> None:
    """Headless Chromium renders the page to a real, non-blank screenshot."""
    page, shot = tmp_path / "summary.html", tmp_path / "summary.png"
    page.write_text(render_html(summary()))
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1200,1600",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    png = shot.read_bytes() if shot.exists() else b""

    assert (png[:8], len(png) > 20_000 and _png_pixels_vary(png)) == (b"\x89PNG\r\n\x1a\n", True)
