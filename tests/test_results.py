"""Candidate-controlled text is safe from the moment a result value holds it."""

from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.pipeline.steps import full_report
from harness.prompts import PromptSet, default_prompts_dir, task_context
from harness.results import (
    ID_CHARS,
    LINE_CHARS,
    OUTPUT_CHARS,
    TEXT_CHARS,
    AttemptRecord,
    Outcome,
    TaskResult,
    TaskStatus,
    TestCase,
    TestResult,
)
from harness.store import RunParams, Store

# Every code point, lone surrogates and controls included, and now and then a lot of it.
_ANY_CHAR = st.characters(exclude_categories=())
_SHORT = st.text(_ANY_CHAR, max_size=40)
TEXT = st.one_of(
    _SHORT,
    st.builds(lambda t, n: (t or "\ud800\x00") * n, _SHORT, st.integers(1, 2_500)),
)
_UNSAFE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def _case(nodeid: str, message: str, details: str) -> TestCase:
    return TestCase(nodeid, Outcome.FAILED, message, details)


def _safe(text: str, limit: int) -> bool:
    text.encode("utf-8")  # raises on a lone surrogate
    return len(text) <= limit and not _UNSAFE.search(text)


@settings(max_examples=150, deadline=None)
@given(TEXT, TEXT, TEXT, TEXT)
def test_every_text_of_a_result_is_encodable_controlled_and_bounded(a, b, c, d) -> None:
    """Whatever a test id, message, traceback, output or error held, the result holds text
    that encodes as UTF-8, has no control character but tab and newlines, and is bounded."""
    case = _case(a, b, c)
    result = TestResult((case,), output=d, error=a, warnings=(b,))

    safe = [
        _safe(case.nodeid, ID_CHARS),
        _safe(case.message, LINE_CHARS),
        _safe(case.details, TEXT_CHARS),
        _safe(result.output, OUTPUT_CHARS),
        _safe(result.error or "", TEXT_CHARS),
        _safe(result.warnings[0], LINE_CHARS),
    ]

    assert all(safe), safe


def test_huge_output_keeps_its_head_and_tail_and_says_what_was_dropped() -> None:
    """Output past its limit keeps both ends (where a failure shows) and counts the rest."""
    output = "HEAD\ud800" + "x" * 3_000_000 + "\x00TAIL"

    kept = TestResult((), output=output).output

    assert (
        kept.startswith("HEAD\\ud800") and kept.endswith("\\x00TAIL"),
        len(kept) <= OUTPUT_CHARS,
        "characters dropped]" in kept,
    ) == (True, True, True)


@settings(max_examples=100, deadline=None)
@given(TEXT, TEXT)
def test_making_text_safe_is_idempotent_and_keeps_safe_text_as_it_is(a, b) -> None:
    """A safe value rebuilt (dataclasses.replace, a store round trip) is unchanged, and text
    that was already safe and short is kept exactly."""
    case = _case(a, b, b)
    plain = "tests/test_x.py::test_ok[é-\t-中]"

    assert (case, plain) == (replace(case), _case(plain, "m", "d").nodeid)


@settings(max_examples=60, deadline=None)
@given(st.text(_ANY_CHAR, min_size=1, max_size=5))
def test_two_long_ids_that_differ_only_at_the_end_stay_two(tail) -> None:
    """A test id past the limit keeps its head and a digest of the whole: no two become one."""
    head = "t.py::test_" + "x" * ID_CHARS

    assert _case(head + tail, "", "").nodeid != _case(head + tail + "!", "", "").nodeid


@settings(max_examples=40, deadline=None)
@given(TEXT, TEXT, TEXT)
def test_a_result_with_any_text_is_stored_logged_and_read_back(a, b, c) -> None:
    """The store records and returns the attempt, and its event line is valid JSON."""
    result = TestResult((_case(a, b, c),), output=c, error=b)
    record = AttemptRecord(1, "write", failed=1, total=1, test_error=a, extraction_error=b)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "h.db")
        try:
            store.begin_run("r1", dt.datetime.now(dt.UTC), "sim", None, RunParams())
            store.record_attempt("r1", "t", record, "code", result)
            stored = store.load_attempts("r1", "t")[0]
        finally:
            store.close()

    assert (record, result) == (stored.record, stored.result)
    json.loads(json.dumps(record.to_json(), ensure_ascii=False).encode("utf-8"))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(a=TEXT, b=TEXT, c=TEXT)
def test_a_fix_prompt_and_a_summary_with_any_text_encode(spec, a, b, c) -> None:
    """The fix prompt built from failing cases and the task's summary entry encode as UTF-8."""
    result = TestResult((_case(a, b, c),))
    failures = [
        {"nodeid": x.nodeid, "outcome": "failed", "message": x.message, "details": x.details}
        for x in result.failing()
    ]
    context = {"code": "x = 1", "failures": failures, "passed": 0, "total": 1}
    context["full_output"] = full_report(result)
    prompt = PromptSet(default_prompts_dir(), "service_port").render(
        "fix", {**task_context(spec), **context}
    )
    task = TaskResult("t", TaskStatus.FAILED, reason=a, warnings=(b,))

    (prompt.system + prompt.text).encode("utf-8")
    json.dumps(task.to_json(), ensure_ascii=False).encode("utf-8")


def test_the_console_and_summary_json_round_the_last_digit_alike() -> None:
    """A half micro-dollar rounds up in both: money() for people and usd() for summary.json."""
    from decimal import Decimal

    from harness.results import money, usd

    amounts = [Decimal("0.0000025"), Decimal("1.2345645"), Decimal("0.0000005")]

    assert ([money(a) for a in amounts], [usd(a) for a in amounts]) == (
        ["$0.000003", "$1.234565", "$0.000001"],
        [0.000003, 1.234565, 0.000001],
    )
