"""The README stays a front door and the docs stay one connected site (offline, no build)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"
PAGES = sorted([README, *DOCS.glob("*.md")])

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text without fenced blocks and code spans, where a link is not a link."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc (MkDocs) gives a heading; GitHub agrees on ours."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    return {_slug(h) for h in _HEADING.findall(_FENCE.sub("", page.read_text()))}


def _relative_links(page: Path) -> list[str]:
    links = _LINK.findall(_prose(page.read_text()))
    return [link for link in links if not re.match(r"^[a-z][a-z0-9+.-]*:", link)]


def _broken(page: Path, link: str) -> str | None:
    path, _, anchor = link.partition("#")
    target = (page.parent / path).resolve() if path else page
    if not target.exists():
        return f"{page.name}: {link}: no such file"
    if anchor and target.suffix == ".md" and anchor not in _anchors(target):
        return f"{page.name}: {link}: no heading with that anchor"
    return None


def _nav_pages(node: object) -> set[str]:
    if isinstance(node, str):
        return {node}
    if isinstance(node, dict):
        return set().union(*(_nav_pages(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_nav_pages(v) for v in node))
    return set()


def test_readme_is_at_most_200_lines() -> None:
    """The README is a front door: reference lives in docs/, so it stays within 200 lines."""
    lines = len(README.read_text().splitlines())

    assert lines <= 200, f"README.md has {lines} lines"


def test_every_relative_link_resolves_to_a_file_and_heading() -> None:
    """Every relative link in README.md and docs/*.md names a file that exists and, for a
    markdown page, a heading it has."""
    broken = [b for page in PAGES for link in _relative_links(page) if (b := _broken(page, link))]

    assert broken == []


def test_links_are_found_in_prose_but_not_in_code() -> None:
    """The link finder sees prose links and heading anchors, and skips code blocks and spans."""
    text = "[a](x.md#b) `[c](y.md)`\n```\n[d](z.md)\n# not a heading\n```\n"

    assert (_LINK.findall(_prose(text)), _slug("Batch mode: `half`-price")) == (
        ["x.md#b"],
        "batch-mode-half-price",
    )


def test_every_docs_page_is_in_the_mkdocs_nav() -> None:
    """Every page under docs/ is listed in mkdocs.yml's nav, and the nav lists no other."""
    nav = _nav_pages(yaml.safe_load(MKDOCS_YML.read_text())["nav"])

    assert nav == {p.name for p in DOCS.glob("*.md")}


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed (it is the docs extra: `make docs` installs it)",
)
def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict` passes: no broken link or anchor, no page missing from nav."""
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert (build.returncode, "WARNING" in build.stderr) == (0, False), build.stderr
