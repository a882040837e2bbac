"""BestTracker: the ratchet."""

from __future__ import annotations

from harness.results import Outcome, TestCase, TestResult
from harness.tracker import BestTracker


def result(passed: int, failed: int = 0, errors: int = 0) -> TestResult:
    cases = (
        [TestCase(f"t::p{i}", Outcome.PASSED) for i in range(passed)]
        + [TestCase(f"t::f{i}", Outcome.FAILED) for i in range(failed)]
        + [TestCase(f"t::e{i}", Outcome.ERROR) for i in range(errors)]
    )
    return TestResult(tuple(cases))


def test_more_passes_win() -> None:
    """A later attempt with more passes becomes the best."""
    tracker = BestTracker()
    tracker.update(1, "a", result(8, 9))

    improved = tracker.update(2, "b", result(12, 5))

    assert (improved, tracker.best.attempt, tracker.best.code) == (True, 2, "b")


def test_regression_keeps_the_earlier_best() -> None:
    """A worse attempt is not taken and is reported as a regression."""
    tracker = BestTracker()
    tracker.update(1, "a", result(12, 5))
    worse = result(10, 7)

    assert tracker.is_regression(worse)
    assert not tracker.update(2, "b", worse)
    assert tracker.best.code == "a"


def test_on_equal_passes_errors_count_worse_than_failures() -> None:
    """Same passes: the attempt whose non-passes are failures beats one with errors."""
    tracker = BestTracker()
    tracker.update(1, "errors", result(5, 0, 3))

    assert tracker.update(2, "failures", result(5, 3, 0))
    assert not tracker.update(3, "errors-again", result(5, 1, 2))
    assert tracker.best.code == "failures"


def test_a_tie_keeps_the_earlier_attempt_and_is_not_a_regression() -> None:
    """Equal results neither replace the best nor count as a regression."""
    tracker = BestTracker()
    tracker.update(1, "a", result(4, 2))

    assert not tracker.is_regression(result(4, 2))
    assert not tracker.update(2, "b", result(4, 2))
    assert tracker.best.attempt == 1


def test_tampered_result_scores_zero_passes() -> None:
    """A tampered run never becomes the best over an honest one."""
    tracker = BestTracker()
    tracker.update(1, "honest", result(1, 3))
    forged = TestResult(result(4).cases, tampered=True)

    assert not tracker.update(2, "forged", forged)
