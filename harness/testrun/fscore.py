"""Score a foreign run: the report, checked against the expected ids and the exit status.

What is trusted, and why:
- the ids: only those collected statically from the pristine tests count; a reported id that
  is not one of them, or one reported twice, is tampering (a forged line or event);
- the exit status: all expected tests passed (or were skipped) exactly when the command exits
  0; any disagreement is tampering (a forged pass for a failing test, or an early exit 0);
- a run the clock stopped: its reported passes cannot be checked against an exit status, so
  they are not counted: every test the run did not see fail is an error "timeout".
Tampering scores every test as an error, as the pytest runner does.
"""

from __future__ import annotations

from dataclasses import replace

from harness.results import Outcome, TestCase, TestResult
from harness.testrun.expect import Expected
from harness.testrun.fspawn import Launched
from harness.testrun.reports import Report

__all__ = ["score"]

_OK = (Outcome.PASSED, Outcome.SKIPPED)


def _missing_reason(got: Launched, report: Report) -> tuple[str, str]:
    """Why an expected test has no outcome: the message and details every such test gets."""
    if got.timed_out:
        return "timeout: the test command did not finish in time", report.text
    if report.text and not report.cases:  # nothing ran: a build or load failure
        lines = [s for s in report.text.splitlines() if s.strip() and not s.startswith("#")]
        first = lines[0] if lines else ""
        return f"the tests did not run: {first.strip()[:400]}", report.text
    return "the test did not run (the test command stopped early)", report.text


def _file_level(report: Report, tests: tuple[str, ...]) -> list[TestCase]:
    """node:test reports a test file that fails to load (or exits) as a testcase named by the
    file's path: not a test, but the reason for the tests of that file that never ran."""
    found = [c for i, c in report.cases.items() if i.endswith(tests)]
    for case in found:
        del report.cases[case.nodeid]
    return found


def _tampering(
    expected: Expected, report: Report, got: Launched, cases: list[TestCase], explained: bool
) -> str:
    """The first sign of tampering, or "". `explained`: a test file itself failed (node), which
    accounts for a failing exit status when every test passed."""
    problems = list(report.problems)
    if got.flooded:
        problems.append(got.flooded)
    if got.tree_problems:
        problems.append(f"the scratch tree changed during the run: {got.tree_problems[0]}")
    if expected.ids is not None:
        unexpected = [i for i in report.cases if i not in expected.ids]
        if unexpected:
            problems.append(f"unexpected test ids {unexpected[:3]} (not in the pristine tests)")
    if not got.timed_out and not problems:
        all_ok = bool(cases) and all(c.outcome in _OK for c in cases)
        if all_ok != (got.exit_code == 0) and not (all_ok and explained):
            problems.append(
                f"the test command exited {got.exit_code} but "
                + ("every test passed" if all_ok else "not every test passed")
            )
    return problems[0] if problems else ""


def score(expected: Expected, report: Report, got: Launched, tests: tuple[str, ...]) -> TestResult:
    """The TestResult of one foreign run (see the module docstring for what is trusted)."""
    loaders = _file_level(report, tests)
    ids = expected.ids if expected.ids is not None else tuple(report.cases)
    message, details = _missing_reason(got, report)
    if loaders and not got.timed_out:
        failed = next((c for c in loaders if c.outcome is not Outcome.PASSED), loaders[0])
        message = f"the test file did not run to the end: {failed.nodeid} {failed.message}"
        details = failed.details or details
    cases = [report.cases.get(i) or TestCase(i, Outcome.ERROR, message, details) for i in ids]
    if got.timed_out:  # unconfirmed passes are not counted
        cases = [
            c if c.outcome is not Outcome.PASSED else TestCase(c.nodeid, Outcome.ERROR, message)
            for c in cases
        ]
    explained = any(c.outcome is not Outcome.PASSED for c in loaders)
    tamper = _tampering(expected, report, got, cases, explained)
    error = None
    if tamper:
        error = f"tampered: {tamper}"
        cases = [TestCase(c.nodeid, Outcome.ERROR, error) for c in cases]
    elif got.timed_out:
        error = message
    cases = [
        replace(
            c,
            hidden=c.nodeid in expected.hidden,
            by_suite=c.outcome is Outcome.SKIPPED and c.nodeid in expected.suite_skips,
        )
        for c in cases
    ]
    return TestResult(
        cases=tuple(cases),
        output=got.text(got.output)[-200_000:],
        error=error,
        timed_out=got.timed_out,
        tampered=bool(tamper),
        duration_s=got.duration_s,
    )
