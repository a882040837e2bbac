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
from harness.results import (
    AttemptRecord,
    RunStatus,
    Seed,
    SeedSource,
    StopCause,
    TaskResult,
    TaskStatus,
)

START = dt.datetime(2026, 5, 12, 2, 15, tzinfo=dt.UTC)
HOSTILE = "<script>alert(1)</script>"


def summary() -> dict[str, Any]:
    """A night with something in every 'needs a human' category."""
    orders = TaskResult(
        "orders",
        TaskStatus.PARTIAL,
        "no improvement in 2 attempts",
        3,
        passed=15,
        failed=2,
        errors=0,
        total=17,
        cost_usd=Decimal("1.2345"),
        output="/x/out/orders_service.py",
        attempts=(
            AttemptRecord(
                1,
                "write",
                passed=8,
                failed=9,
                errors=0,
                total=17,
                cost_usd=Decimal("0.2"),
                improved=True,
            ),
            AttemptRecord(
                2, "fix", cost_usd=Decimal("0.3"), extraction_error="reply ended with max_tokens"
            ),
            AttemptRecord(
                3,
                "fix",
                passed=15,
                failed=2,
                errors=0,
                total=17,
                cost_usd=Decimal("0.3"),
                improved=True,
            ),
            AttemptRecord(
                4,
                "fix",
                passed=11,
                failed=6,
                errors=0,
                total=17,
                cost_usd=Decimal("0.4"),
                regressed=True,
            ),
        ),
        warnings=("uses time.sleep in a handler",),
    )
    users = TaskResult(
        "users",
        TaskStatus.PASSED,
        "",
        2,
        passed=9,
        failed=0,
        errors=0,
        total=9,
        cost_usd=Decimal("0.31"),
        output="/x/out/u.py",
        attempts=(
            AttemptRecord(1, "write", passed=6, failed=3, errors=0, total=9),
            AttemptRecord(2, "fix", passed=9, failed=0, errors=0, total=9),
        ),
    )
    hostile = TaskResult(
        HOSTILE,
        TaskStatus.GUARDRAIL,
        'forbidden `os.system("x")` & <b>',
        None,
        attempts=(AttemptRecord(1, "write", passed=0, failed=0, errors=4, total=4, tampered=True),),
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
    table = _tree().all("table")[0]
    rows = [[td.content() for td in tr.all("td")] for tr in table.all("tbody")[0].all("tr")]

    trail = "1:8/17 $0.20 · 2:✗ $0.30 · 3:15/17 $0.30 · 4:11/17↩ $0.40"

    assert (rows[0][:6], len(rows)) == (["orders", "partial", "3", "15/17", "$1.2345", trail], 5)


def test_chart_marks_best_reverted_and_missing_code() -> None:
    """Bars of passed tests; best and reverted attempts marked; no-code replies drawn as a cross."""
    svg = _chart(_tree(), "orders")
    bars = {r.attrs["data-n"]: set(r.attrs["class"].split()) for r in svg.all("rect")}

    assert ({"1": {"bar"}, "3": {"bar", "best", "shipped"}, "4": {"bar", "regressed"}}, ["2"]) == (
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


def night() -> dict[str, Any]:
    """A night with a seeded task, an unshipped 0-pass best, an escalation and a revert."""
    seeded = TaskResult(
        "orders",
        TaskStatus.PASSED,
        "",
        3,
        passed=17,
        failed=0,
        errors=0,
        total=17,
        cost_usd=Decimal("0.75"),
        output="/x/out/orders_service.py",
        attempts=(
            AttemptRecord(
                1,
                "fix",
                passed=12,
                failed=5,
                errors=0,
                total=17,
                cost_usd=Decimal("0.1"),
                tier="mid",
                improved=True,
            ),
            AttemptRecord(
                2,
                "fix",
                passed=9,
                failed=8,
                errors=0,
                total=17,
                cost_usd=Decimal("0.15"),
                regressed=True,
                tier="mid",
            ),
            AttemptRecord(
                3,
                "fix",
                passed=17,
                failed=0,
                errors=0,
                total=17,
                cost_usd=Decimal("0.5"),
                tier="frontier",
                improved=True,
            ),
        ),
        seed=Seed(SeedSource.OUTPUT, None, passed=10, failed=7, errors=0, total=17),
    )
    nothing = TaskResult(
        "users",
        TaskStatus.FAILED,
        "2 attempts used",
        1,
        passed=0,
        failed=0,
        errors=9,
        total=9,
        cost_usd=Decimal("0.2"),
        output=None,
        attempts=(
            AttemptRecord(
                1,
                "write",
                passed=0,
                failed=0,
                errors=9,
                total=9,
                cost_usd=Decimal("0.12"),
                tier="mid",
            ),
            AttemptRecord(2, "fix", cost_usd=Decimal("0.08"), tier="mid", extraction_error="prose"),
        ),
    )
    carried = TaskResult(
        "wallets",
        TaskStatus.PASSED,
        "",
        0,
        passed=6,
        failed=0,
        errors=0,
        total=6,
        output="/x/out/wallets_service.py",
        seed=Seed(
            SeedSource.EARLIER_RUN, "20260511-013000-cd34", passed=6, failed=0, errors=0, total=6
        ),
    )
    skips = TaskResult(
        "knapsack",
        TaskStatus.PASSED,
        "",
        1,
        passed=3,
        failed=0,
        errors=0,
        total=3,
        cost_usd=Decimal("0.05"),
        output="/x/fixed/knapsack.py",
        attempts=(
            AttemptRecord(
                1,
                "write",
                passed=3,
                failed=0,
                errors=0,
                total=3,
                cost_usd=Decimal("0.05"),
                tier="mid",
                skipped=1,
            ),
        ),
        skipped=1,
    )
    return RunSummary(
        "20260512-021500-ef56",
        START,
        START + dt.timedelta(minutes=9),
        RunStatus.COMPLETED,
        "live",
        Decimal(30),
        Decimal("1.0"),
        (seeded, nothing, carried, skips),
    ).to_json()


def _article(root: _Node, task_id: str) -> _Node:
    (article,) = [a for a in root.all("article") if a.attrs.get("id") == f"task-{task_id}"]
    return article


def _note(root: _Node, task_id: str) -> str:
    return _article(root, task_id).all("p", "note")[0].content()


def _bars(root: _Node, task_id: str) -> dict[str, set[str]]:
    rects = _article(root, task_id).all("rect")
    return {r.attrs["data-n"]: set(r.attrs["class"].split()) for r in rects}


def test_a_best_that_passes_nothing_is_not_drawn_as_shipped() -> None:
    """output null: the best bar is marked unshipped and the note says why, never "shipped"."""
    root = _Tree(render_html(night())).root
    titles = [t.content() for t in _article(root, "users").all("title")]

    assert (_bars(root, "users"), _note(root, "users")) == (
        {"1": {"bar", "best", "unshipped"}},
        "best: attempt 1, 0/9 passed, not shipped: it passes no test · 2 attempts used",
    )
    assert [t for t in titles if "shipped" in t] == [
        "attempt 1 (write, mid, $0.12): 0/9 passed, best, not shipped"
    ]


def test_a_seed_from_the_output_file_is_not_carried_over_and_is_charted() -> None:
    """Seeded from the file at the output path: its own words, and its bar starts the chart."""
    root = _Tree(render_html(night())).root
    labels = [t.content() for t in _chart(root, "orders").all("text")]

    assert (_note(root, "orders"), _bars(root, "orders")["0"], labels[2:4]) == (
        "best: attempt 3, 17/17 passed, shipped",
        {"bar", "seed"},
        ["10", "seed"],
    )
    assert "carried over" not in _article(root, "orders").content()
    assert _note(root, "wallets") == (
        "best: the candidate carried over from run 20260511-013000-cd34, 6/6 passed, shipped"
    )


def test_tier_cost_and_escalation_of_every_attempt() -> None:
    """Each task lists its attempts with tier and cost; the escalated fix is marked."""
    root = _Tree(render_html(night())).root
    (table,) = _article(root, "orders").all("table", "attempts")
    rows = [[td.content() for td in tr.all("td")] for tr in table.all("tbody")[0].all("tr")]

    assert rows == [
        ["seed", "seeded from the file already at its output path", "—", "10/17", "—",
         "10/17 passed"],
        ["1", "fix", "mid", "12/17", "$0.10", "12/17 passed"],
        ["2", "fix", "mid", "9/17", "$0.15", "9/17 passed, regressed: reverted"],
        ["3", "fix", "frontier ↑ escalated", "17/17", "$0.50", "17/17 passed, best, shipped"],
    ]  # fmt: skip


def test_reverts_are_totals_and_suite_skips_are_said() -> None:
    """A revert the ratchet handled is counted in the totals, not listed for a human."""
    root = _Tree(render_html(night())).root
    (activity,) = root.all("p", "activity")

    assert (
        [li.content() for li in root.all("li", "attention")],
        [li.content() for li in root.all("li", "nothing")],
        activity.content(),
        _note(root, "knapsack"),
    ) == (
        [],
        ["nothing"],
        "6 attempt(s) · 1 escalated to another tier · 1 regression(s) reverted by the ratchet"
        " · 1 task(s) seeded from the file at their output · 1 carried over from an earlier run",
        "best: attempt 1, 3/3 passed (+1 skipped by the suite), shipped",
    )


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


def _chromium(tmp_path: Path, html: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium, a fresh profile, nothing fetched: `args` say what to produce."""
    page = tmp_path / "summary.html"
    page.write_text(html)
    headless = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    quiet = ["--disable-component-update", "--disable-sync", "--no-first-run"]
    profile = f"--user-data-dir={tmp_path / 'profile'}"
    return subprocess.run(
        [CHROMIUM, *headless, *quiet, profile, *args, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed")
def test_renders_in_headless_chromium(tmp_path: Path) -> None:
    """Headless Chromium renders the page to a real, non-blank screenshot."""
    shot = tmp_path / "summary.png"
    _chromium(tmp_path, render_html(summary()), "--window-size=1200,1600", f"--screenshot={shot}")
    png = shot.read_bytes() if shot.exists() else b""

    assert (png[:8], len(png) > 20_000 and _png_pixels_vary(png)) == (b"\x89PNG\r\n\x1a\n", True)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed")
def test_chromium_dom_says_what_the_night_did(tmp_path: Path) -> None:
    """The DOM a browser builds for a night with a seeded task, an unshipped 0-pass best, an
    escalation and a revert says each of them in the right words."""
    dom = _chromium(tmp_path, render_html(night()), "--dump-dom").stdout
    root = _Tree(dom).root
    users, orders = _article(root, "users"), _article(root, "orders")
    (tier,) = orders.all("span", "esc")

    assert (
        _note(root, "users"),
        [r.attrs["class"] for r in users.all("rect")],
        "best, shipped" in users.content(),
        _note(root, "orders"),
        "carried over" in orders.content(),
        [r.attrs["class"] for r in orders.all("rect")],
        tier.content(),
        [li.content() for li in root.all("li", "attention")],
        "1 regression(s) reverted by the ratchet" in root.all("p", "activity")[0].content(),
    ) == (
        "best: attempt 1, 0/9 passed, not shipped: it passes no test · 2 attempts used",
        ["bar best unshipped"],
        False,
        "best: attempt 3, 17/17 passed, shipped",
        False,
        ["bar seed", "bar", "bar regressed", "bar best shipped"],
        "frontier ↑ escalated",
        [],
        True,
    )
