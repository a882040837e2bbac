"""Read a foreign runner's report into per-test outcomes: `go test -json` events, JUnit XML.

A reader only parses; it trusts nothing. What it cannot reconcile (a test reported twice, a
document that does not parse) is listed in `problems`, which the scorer treats as tampering.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as safe_xml
from defusedxml import DefusedXmlException

from harness.results import Outcome, TestCase

__all__ = ["MAX_REPORT_BYTES", "Report", "read_go_json", "read_junit"]

MAX_REPORT_BYTES = 8 << 20  # a JUnit file past this is refused (honest suites stay far below)
_DETAILS_CAP = 4000
_GO_TERMINAL = {"pass": Outcome.PASSED, "fail": Outcome.FAILED, "skip": Outcome.SKIPPED}
_GO_NOISE = ("=== RUN", "=== PAUSE", "=== CONT", "--- FAIL", "--- PASS", "--- SKIP")


@dataclass
class Report:
    """Cases in report order; `text`: output that belongs to no test (a build failure)."""

    cases: dict[str, TestCase] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    text: str = ""

    def add(self, case: TestCase) -> None:
        if case.nodeid in self.cases:
            self.problems.append(f"test {case.nodeid!r} was reported twice")
        else:
            self.cases[case.nodeid] = case


def _cap(text: str) -> str:
    return text if len(text) <= _DETAILS_CAP else f"...\n{text[-_DETAILS_CAP:]}"


def _go_event(line: str) -> dict | None:
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    ok = isinstance(event, dict) and isinstance(event.get("Action"), str)
    return event if ok and isinstance(event.get("Test", ""), str) else None


def _go_message(lines: list[str], outcome: Outcome) -> str:
    # "\x16" frames test2json's lines in newer Go; a bare PASS/FAIL is the binary's verdict.
    bare = (s.strip().lstrip("\x16") for s in lines)
    useful = [s for s in bare if s and not s.startswith(_GO_NOISE) and s not in ("PASS", "FAIL")]
    if useful:
        return useful[0][:500]
    return "" if outcome is Outcome.PASSED else outcome.value


def read_go_json(stream: str) -> Report:
    """`go test -json`: a top-level test's pass/fail/skip settles it; its subtests' output is
    part of its details; lines that are not events (the compiler's) make up `text`."""
    report = Report()
    output: dict[str, list[str]] = {}
    started: set[str] = set()
    loose: list[str] = []
    for line in stream.splitlines():
        event = _go_event(line)
        if event is None:
            loose.append(line)
            continue
        test, action = event.get("Test") or "", event["Action"]
        top = test.split("/", 1)[0]
        if not top:
            if action == "output":
                loose.append(str(event.get("Output", "")).rstrip("\n"))
            continue
        if action == "output":
            output.setdefault(top, []).append(str(event.get("Output", "")).rstrip("\n"))
        elif test == top and action == "run":
            if top in started:
                report.problems.append(f"test {top!r} was started twice")
            started.add(top)
        elif test == top and action in _GO_TERMINAL:
            lines = output.get(top, [])
            outcome = _GO_TERMINAL[action]
            report.add(TestCase(top, outcome, _go_message(lines, outcome), _cap("\n".join(lines))))
    report.text = _cap("\n".join(s for s in loose if s.strip()))
    return report


def _junit_case(node: Element) -> TestCase:
    name = str(node.get("name") or "")
    for tag, outcome in (("failure", Outcome.FAILED), ("error", Outcome.ERROR)):
        found = node.find(tag)
        if found is not None:
            message = str(found.get("message") or found.get("type") or tag)[:500]
            return TestCase(name, outcome, message, _cap((found.text or "").strip()))
    skipped = node.find("skipped")
    if skipped is not None:
        return TestCase(name, Outcome.SKIPPED, str(skipped.get("message") or "skipped")[:500])
    return TestCase(name, Outcome.PASSED)


def read_junit(data: bytes) -> Report:
    """A JUnit XML document: every <testcase>, at any depth, by its name. Parsed with defusedxml
    (no entities, no external references) and refused past MAX_REPORT_BYTES."""
    report = Report()
    if len(data) > MAX_REPORT_BYTES:
        report.problems.append(f"the JUnit report is over {MAX_REPORT_BYTES >> 20} MiB")
        return report
    try:
        root = safe_xml.fromstring(data)
    except (ParseError, DefusedXmlException, ValueError) as exc:
        report.problems.append(f"the JUnit report is not one well-formed document ({exc})")
        return report
    if root.tag not in ("testsuites", "testsuite"):
        report.problems.append(f"the JUnit report's root is <{root.tag}>, not <testsuites>")
        return report
    for node in root.iter("testcase"):
        report.add(_junit_case(node))
    return report
