"""Run store: schema, exact round trips, spend, the across-nights queries, threads, SIGKILL."""

from __future__ import annotations

import datetime as dt
import signal
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.llm import (
    CallRequest,
    Completion,
    Prompt,
    RecordedReply,
    Route,
    StopReason,
    Usage,
)
from harness.results import (
    AttemptRecord,
    JudgeOutcome,
    Outcome,
    ReviewOutcome,
    RunStatus,
    StopCause,
    TaskResult,
    TaskStatus,
    TestCase,
    TestResult,
)
from harness.store import MIGRATIONS, RunParams, Store, StoreError, resolve_run

T0 = dt.datetime(2026, 5, 12, 2, 15, tzinfo=dt.timezone(dt.timedelta(hours=2)))


@pytest.fixture
def store(tmp_path: Path):
    s = Store.open(tmp_path / "harness.db")
    yield s
    s.close()


def _request(task_id: str = "orders", attempt: int = 1, step: str = "write") -> CallRequest:
    route = Route("mid", "sim", "sim-mid", 1000)
    return CallRequest(route, Prompt("s", "stable", "var"), task_id, step, attempt)


def _completion(retries: int = 0) -> Completion:
    return Completion(
        "```python\nx = 1\n```", Usage(10, 2, 3, 40), StopReason.END, "sim-mid", "sim", 0.5, retries
    )


def _call(
    store: Store, run_id: str, request: CallRequest, completion: Completion, cost: Decimal
) -> None:
    """One finished call, opened at a reservation and closed at its cost, as the Caller does."""
    store.close_call(store.open_call(run_id, request, Decimal(1)), completion, cost)


def _result(passed: int, failed: int = 0, errors: int = 0, tampered: bool = False) -> TestResult:
    cases = [TestCase(f"t.py::p{i}", Outcome.PASSED) for i in range(passed)]
    cases += [TestCase(f"t.py::f{i}", Outcome.FAILED, "assert 1 == 2", "tb") for i in range(failed)]
    cases += [TestCase(f"t.py::e{i}", Outcome.ERROR, "boom") for i in range(errors)]
    return TestResult(tuple(cases), tampered=tampered)


def _attempt(
    store: Store, run: str, task: str, n: int, result: TestResult | None, code: str | None = "c"
):
    record = AttemptRecord(
        n,
        "write" if n == 1 else "fix",
        passed=result.passed if result else 0,
        total=result.total if result else 0,
        cost_usd=Decimal("0.01"),
        extraction_error=None if code else "no code",
    )
    store.record_attempt(run, task, record, code, result)


def test_open_creates_current_schema_in_wal_mode(tmp_path: Path) -> None:
    """A new store is at the latest schema version and in WAL mode, and reopening keeps it."""
    Store.open(tmp_path / "h.db").close()
    Store.open(tmp_path / "h.db").close()
    conn = sqlite3.connect(tmp_path / "h.db")

    assert (len(MIGRATIONS), "wal") == (
        conn.execute("PRAGMA user_version").fetchone()[0],
        conn.execute("PRAGMA journal_mode").fetchone()[0],
    )


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    """A store written by a newer harness is refused rather than misread."""
    conn = sqlite3.connect(tmp_path / "h.db")
    conn.execute(f"PRAGMA user_version={len(MIGRATIONS) + 1}")
    conn.close()

    with pytest.raises(StoreError, match="newer"):
        Store.open(tmp_path / "h.db")


def test_spent_is_the_exact_decimal_sum(store: Store) -> None:
    """Spend carried over on resume is exact: three 0.1 calls cost 0.3, not 0.30000000000000004."""
    store.begin_run("r1", T0, "sim", Decimal("5"), RunParams(tasks=Path("t.yaml")))
    log = store.call_log("r1")
    for task in ("a", "a", "b"):
        log.close_call(log.open_call(_request(task), Decimal(1)), _completion(), Decimal("0.1"))

    assert (Decimal("0.3"), Decimal("0.2"), Decimal(0)) == (
        store.spent("r1"),
        store.spent("r1", "a"),
        store.spent("other"),
    )


def test_a_call_in_flight_counts_at_its_reservation_until_closed(store: Store) -> None:
    """A call open when the process dies stays counted at its worst case; closing settles it."""
    store.begin_run("r1", T0, "sim", Decimal("5"), RunParams())
    log = store.call_log("r1")
    handle = log.open_call(_request("a"), Decimal("0.75"))
    log.open_call(_request("b"), Decimal("0.5"))  # never closed: the kill -9 case

    in_flight = store.spent("r1")
    log.close_call(handle, _completion(), Decimal("0.01"))

    assert (Decimal("1.25"), Decimal("0.51"), Decimal("0.01")) == (
        in_flight,
        store.spent("r1"),
        store.spent("r1", "a"),
    )


@st.composite
def _test_results(draw: st.DrawFn) -> TestResult:
    text = st.text(max_size=40)
    cases = draw(
        st.lists(st.builds(TestCase, text, st.sampled_from(Outcome), text, text), max_size=5)
    )
    return TestResult(
        tuple(cases),
        draw(text),
        draw(st.none() | text),
        draw(st.booleans()),
        draw(st.booleans()),
        draw(st.floats(min_value=0, allow_nan=False, allow_infinity=False)),
        tuple(draw(st.lists(text, max_size=3))),
        draw(st.booleans()),
    )


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(result=_test_results(), cost=st.decimals(min_value=0, max_value=100, places=12))
def test_attempt_round_trips_exactly(store: Store, result: TestResult, cost: Decimal) -> None:
    """An attempt's record, code and TestResult come back exactly as recorded."""
    store.begin_run("r1", T0, "sim", None, RunParams())
    record = AttemptRecord(
        1,
        "write",
        passed=result.passed,
        cost_usd=cost,
        review=ReviewOutcome.CLEAN,
        tampered=result.tampered,
        test_error=result.error,
    )
    store.record_attempt("r1", "orders", record, "def f():\n    return 'é'\n", result)

    assert [(record, "def f():\n    return 'é'\n", result)] == [
        (a.record, a.code, a.result) for a in store.load_attempts("r1", "orders")
    ]


def test_load_attempts_returns_this_runs_attempts_in_order(store: Store) -> None:
    """load_attempts gives one task's attempts of one run, ordered by attempt number."""
    for run in ("r1", "r2"):
        store.begin_run(run, T0, "sim", None, RunParams())
    for n in (3, 1, 2):
        _attempt(store, "r1", "orders", n, _result(n), code=None if n == 2 else f"v{n}")
    _attempt(store, "r2", "orders", 1, _result(9))
    _attempt(store, "r1", "users", 1, _result(9))

    assert [(a.record.n, a.code) for a in store.load_attempts("r1", "orders")] == [
        (1, "v1"),
        (2, None),
        (3, "v3"),
    ]


def test_task_results_round_trip(store: Store) -> None:
    """TaskResult values, attempts, warnings and Decimal costs included, round-trip exactly."""
    store.begin_run("r1", T0, "sim", None, RunParams())
    result = TaskResult(
        "orders",
        TaskStatus.PARTIAL,
        "no improvement in 2 attempts",
        2,
        passed=5,
        failed=1,
        errors=0,
        total=6,
        cost_usd=Decimal("0.123456789"),
        output="/out/orders.py",
        attempts=(
            AttemptRecord(
                1, "write", passed=3, failed=3, errors=0, total=6, cost_usd=Decimal("0.1")
            ),
            AttemptRecord(
                2,
                "fix",
                passed=5,
                failed=1,
                errors=0,
                total=6,
                cost_usd=Decimal("0.023456789"),
                improved=True,
            ),
        ),
        warnings=("sleeps in a handler",),
        cause=StopCause.BUDGET,
    )
    store.record_task("r1", result, "d1")

    assert {"orders": result} == store.task_results("r1")


def test_passed_before_finds_the_newest_pass_on_the_same_inputs(store: Store) -> None:
    """Only a pass with the same digest counts, and the newest such run is named."""
    for run, status, digest in (
        ("r1", TaskStatus.PASSED, "d1"),
        ("r2", TaskStatus.PASSED, "d1"),
        ("r3", TaskStatus.PARTIAL, "d1"),
        ("r4", TaskStatus.PASSED, "d2"),
    ):
        store.begin_run(run, T0, "sim", None, RunParams())
        store.record_task(run, TaskResult("orders", status), digest)

    assert (
        store.passed_before("orders", "d1"),
        store.passed_before("orders", "d2"),
        store.passed_before("orders", "d3"),
        store.passed_before("users", "d1"),
    ) == ("r2", "r4", None, None)


def test_best_earlier_ranks_by_tracker_score_across_runs(store: Store) -> None:
    """The best earlier candidate wins by score; tampered and code-less attempts never count."""
    for run in ("r1", "r2", "r3"):
        store.begin_run(run, T0, "sim", None, RunParams())
    _attempt(store, "r1", "orders", 1, _result(5, failed=1))
    _attempt(store, "r1", "orders", 2, _result(5, errors=1))
    _attempt(store, "r2", "orders", 1, _result(9, tampered=True))
    _attempt(store, "r2", "orders", 2, None, code=None)
    _attempt(store, "r3", "orders", 1, _result(6))

    best = store.best_earlier("orders")
    without_r3 = store.best_earlier("orders", exclude_run="r3")

    assert (
        (best.run_id, best.record.n),
        (without_r3.run_id, without_r3.record.n),
        store.best_earlier("users"),
    ) == (("r3", 1), ("r1", 1), None)


def test_best_earlier_tie_goes_to_the_newer_run(store: Store) -> None:
    """Equal scores: the newer run's candidate, tested against the newer tests, is chosen."""
    for run in ("r1", "r2"):
        store.begin_run(run, T0, "sim", None, RunParams())
        _attempt(store, run, "orders", 1, _result(4, failed=2), code=run)

    assert store.best_earlier("orders").code == "r2"


def test_begin_run_again_reopens_the_run_for_resume(store: Store) -> None:
    """Beginning an existing run again (a resume) reopens it, keeping its start time."""
    store.begin_run("r1", T0, "sim", Decimal("3"), RunParams(Path("/t.yaml"), 1))
    store.finish_run("r1", RunStatus.INTERRUPTED, T0 + dt.timedelta(hours=1))
    store.begin_run(
        "r1", T0 + dt.timedelta(hours=2), "sim", Decimal("4"), RunParams(Path("/t.yaml"), 2, ("a",))
    )
    info = store.run_info("r1")

    assert (T0, None, None, Decimal("4"), RunParams(Path("/t.yaml"), 2, ("a",)), 1) == (
        info.started_at,
        info.finished_at,
        info.status,
        info.cap_usd,
        info.params,
        info.resumes,
    )


def test_run_params_keep_the_args_column_as_it_was(tmp_path: Path, store: Store) -> None:
    """The `args` column holds the same JSON as before RunParams, and old rows still read."""
    store.begin_run("r1", T0, "sim", None, RunParams(Path("/t.yaml"), 2, ("a", "b")))
    store.begin_run("r0", T0, "sim", None, RunParams())
    conn = sqlite3.connect(tmp_path / "harness.db")
    conn.execute("""UPDATE runs SET args='{"tasks": "/old.yaml"}' WHERE run_id='r0'""")
    conn.commit()
    conn.close()

    assert (
        '{"tasks": "/t.yaml", "seed": 2, "only": ["a", "b"]}',
        RunParams(Path("/old.yaml")),
    ) == (
        _sql_one(tmp_path / "harness.db", "SELECT args FROM runs WHERE run_id='r1'"),
        store.run_info("r0").params,
    )


def _sql_one(db: Path, sql: str) -> object:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def test_latest_run_is_the_last_begun(store: Store) -> None:
    """latest_run follows insertion order, whatever the start times say."""
    assert store.latest_run() is None
    store.begin_run("r-b", T0, "sim", None, RunParams())
    store.begin_run("r-a", T0 - dt.timedelta(days=1), "live", None, RunParams())
    store.finish_run("r-a", RunStatus.COMPLETED, T0)

    assert (
        store.latest_run(),
        store.run_info("r-a").status,
        store.run_info("nope"),
    ) == ("r-a", RunStatus.COMPLETED, None)


def test_totals_count_every_run(store: Store) -> None:
    """Totals feed the *_total metrics: runs by status, calls, retries, failures, reverts."""
    store.begin_run("r1", T0, "sim", None, RunParams())
    store.finish_run("r1", RunStatus.COMPLETED, T0)
    store.begin_run("r2", T0, "sim", None, RunParams())
    for retries in (2, 1):
        _call(store, "r2", _request(), _completion(retries=retries), Decimal("0.01"))
    _attempt(store, "r2", "orders", 1, None, code=None)
    store.record_attempt("r2", "orders", AttemptRecord(2, "fix", regressed=True), "c", _result(1))
    totals = store.totals()

    assert (
        totals.runs,
        totals.calls,
        totals.retries,
        totals.extraction_failures,
        totals.reverts,
    ) == ({"completed": 1, "unfinished": 1}, 2, 3, 1, 1)


def test_totals_count_judge_outcomes_over_every_run(store: Store) -> None:
    """harness_judge_outcome_total counts judged tasks by outcome across runs; a task with
    the judge off counts nowhere, and a resumed task's row is counted once."""
    for run in ("r1", "r2"):
        store.begin_run(run, T0, "sim", None, RunParams())
    store.record_task("r1", TaskResult("a", TaskStatus.PASSED, judge=JudgeOutcome.FLAG), "d")
    store.record_task("r1", TaskResult("a", TaskStatus.PASSED, judge=JudgeOutcome.FLAG), "d")
    store.record_task("r1", TaskResult("b", TaskStatus.PASSED), "d")
    store.record_task("r2", TaskResult("a", TaskStatus.PASSED, judge=JudgeOutcome.FLAG), "d")
    store.record_task("r2", TaskResult("b", TaskStatus.PARTIAL, judge=JudgeOutcome.SKIPPED), "d")

    assert store.totals().judge == {"flag": 2, "skipped": 1}


def test_concurrent_writers_from_a_thread_pool(store: Store) -> None:
    """Eight threads recording calls and attempts at once lose nothing and sum exactly."""
    store.begin_run("r1", T0, "sim", None, RunParams())

    def work(i: int) -> None:
        for n in range(1, 26):
            _call(store, "r1", _request(f"t{i}", n), _completion(), Decimal("0.001"))
            _attempt(store, "r1", f"t{i}", n, _result(n))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))

    assert (Decimal("0.200"), [25] * 8) == (
        store.spent("r1"),
        [len(store.load_attempts("r1", f"t{i}")) for i in range(8)],
    )


_WRITER = textwrap.dedent(
    """
    import sys, datetime as dt
    from decimal import Decimal
    from harness.results import AttemptRecord
    from harness.store import RunParams, Store
    from harness.results import Outcome, TestCase, TestResult

    store = Store.open(sys.argv[1])
    store.begin_run("r1", dt.datetime.now(dt.UTC), "sim", None, RunParams())
    result = TestResult((TestCase("t::a", Outcome.PASSED), TestCase("t::b", Outcome.FAILED, "m")))
    for n in range(1, 100000):
        record = AttemptRecord(n, "fix", cost_usd=Decimal(n))
        store.record_attempt("r1", "orders", record, "x" * 5000, result)
        print(n, flush=True)
    """
)


@pytest.mark.parametrize("kill_after", [1, 5, 40])
def test_sigkill_loses_no_finished_attempt(tmp_path: Path, kill_after: int) -> None:
    """Every attempt acknowledged before a SIGKILL is in the store afterwards, intact."""
    db = tmp_path / "h.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db)], stdout=subprocess.PIPE, text=True
    )
    acknowledged = [int(proc.stdout.readline()) for _ in range(kill_after)]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    reopened = Store.open(db)
    stored = [a.record.n for a in reopened.load_attempts("r1", "orders")]
    integrity = sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0]
    reopened.close()

    assert (acknowledged, "ok") == (stored[:kill_after], integrity)


def test_a_recorded_reply_is_found_again_only_for_the_very_same_request(store: Store) -> None:
    """The reply a closed call received comes back, with its cost and tier, for the same task,
    attempt, step and prompt; an in-flight or failed call, or another prompt, has none."""
    store.begin_run("r1", dt.datetime(2026, 11, 21, 1, 30), "sim", None, RunParams())
    request = _request()
    _call(store, "r1", request, _completion(), Decimal("0.25"))
    store.open_call("r1", _request(step="review"), Decimal(1))  # in flight at a kill
    failed = Completion("", Usage(), StopReason.ERROR, "sim-mid", "sim", detail="cut")
    _call(store, "r1", _request(attempt=2, step="fix"), failed, Decimal("0.5"))
    other = replace(request, prompt=Prompt("s", "stable", "other"))

    found = store.call_log("r1").recorded(request)

    assert found == RecordedReply(_completion(), Decimal("0.25"), "mid")
    assert store.recorded_reply("r1", _request(step="review")) is None
    assert store.recorded_reply("r1", _request(attempt=2, step="fix")) is None
    assert store.recorded_reply("r1", other) is None
    assert store.recorded_reply("r2", request) is None


def _file(path: Path) -> None:
    path.write_text("20261121-010000-abcd\n")


def _link(target: str):
    return lambda path: path.symlink_to(target)


@pytest.mark.parametrize(
    "make", [_file, _link("gone"), _link("latest")], ids=["a_file", "dangling", "a_loop"]
)
def test_a_latest_that_leads_to_no_run_folder_says_so(tmp_path: Path, make) -> None:
    """`latest` a plain file, a dangling link or a loop: an error naming it and the fix."""
    make(tmp_path / "latest")

    with pytest.raises(FileNotFoundError) as caught:
        resolve_run(tmp_path)

    assert f"{tmp_path / 'latest'} does not lead to a run folder" in str(caught.value)


def _file_state(path: Path) -> tuple[int, bytes]:
    return path.stat().st_mtime_ns, path.read_bytes()


def test_a_read_only_open_reads_the_store_and_leaves_its_bytes_and_mtime_untouched(
    tmp_path: Path,
) -> None:
    """Store.open_readonly answers queries; the file keeps its bytes and mtime; a write
    through it is refused by SQLite itself."""
    path = tmp_path / "h.db"
    writer = Store.open(path)
    writer.begin_run("r1", T0, "sim", Decimal("3"), RunParams(Path("/t.yaml"), 1))
    writer.close()
    before = _file_state(path)

    reader = Store.open_readonly(path)
    try:
        info = reader.run_info("r1")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.finish_run("r1", RunStatus.COMPLETED, T0)
    finally:
        reader.close()

    assert (info.provider, _file_state(path)) == ("sim", before)


def test_a_read_only_open_of_a_newer_store_is_refused(tmp_path: Path) -> None:
    """A store a newer harness wrote is refused, read only as when opened for writing."""
    conn = sqlite3.connect(tmp_path / "h.db")
    conn.execute(f"PRAGMA user_version={len(MIGRATIONS) + 1}")
    conn.close()

    with pytest.raises(StoreError, match="newer"):
        Store.open_readonly(tmp_path / "h.db")
