"""summary.json (schema 1) and summary.md."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import tempfile
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.report import RunSummary, load_summary, render_markdown, write_summary
from harness.results import (
    AttemptRecord,
    BatchReport,
    RunStatus,
    Seed,
    SeedSource,
    StopCause,
    TaskBatch,
    TaskResult,
    TaskStatus,
)

START = dt.datetime(2026, 11, 21, 1, 0, tzinfo=dt.UTC)


def summary() -> RunSummary:
    attempts = (
        AttemptRecord(
            1,
            "write",
            passed=8,
            failed=9,
            errors=0,
            total=17,
            cost_usd=Decimal("0.12"),
            improved=True,
        ),
        AttemptRecord(
            2,
            "fix",
            passed=12,
            failed=5,
            errors=0,
            total=17,
            cost_usd=Decimal("0.2"),
            improved=True,
        ),
        AttemptRecord(
            3,
            "fix",
            passed=10,
            failed=7,
            errors=0,
            total=17,
            cost_usd=Decimal("0.19"),
            regressed=True,
        ),
    )
    orders = TaskResult(
        "orders",
        TaskStatus.PARTIAL,
        "3 attempts used",
        2,
        passed=12,
        failed=5,
        errors=0,
        total=17,
        cost_usd=Decimal("0.51"),
        output="/x/out/orders.py",
        attempts=attempts,
    )
    skipped = TaskResult("users", TaskStatus.SKIPPED, "budget", cause=StopCause.BUDGET)
    return RunSummary(
        "r1",
        START,
        START + dt.timedelta(minutes=61, seconds=5),
        RunStatus.BUDGET_STOPPED,
        "sim",
        Decimal(30),
        Decimal("0.51"),
        (orders, skipped),
    )


def test_summary_json_follows_schema_1(tmp_path) -> None:
    """The contract's fields, with floats for money and ISO timestamps."""
    data = json.loads(json.dumps(write_summary(tmp_path, summary())))
    on_disk = json.loads((tmp_path / "summary.json").read_text())

    assert data == on_disk
    assert data["schema"] == 1
    assert data["status"] == "budget_stopped"
    assert data["budget"] == {"cap_usd": 30.0, "spent_usd": 0.51}
    task = data["tasks"][0]
    assert {
        k: task[k] for k in ("id", "status", "best_attempt", "passed", "total", "cost_usd")
    } == {
        "id": "orders",
        "status": "partial",
        "best_attempt": 2,
        "passed": 12,
        "total": 17,
        "cost_usd": 0.51,
    }
    assert task["attempts"][2] == task["attempts"][2] | {
        "n": 3,
        "kind": "fix",
        "regressed": True,
        "extraction_error": None,
        "passed": 10,
    }


def test_markdown_puts_totals_then_attention_then_table(tmp_path) -> None:
    """The morning read: totals line, what needs a human, the per-task table."""
    write_summary(tmp_path, summary())
    text = (tmp_path / "summary.md").read_text()

    totals = "**0 passed, 1 partial, 0 failed, 1 skipped** of 2 tasks"
    assert f"{totals} · spent $0.51 of $30.00 · 1h01m05s" in text
    assert text.index("## Needs a human") < text.index("## Tasks")
    assert "3 attempt(s) · 0 escalated to another tier · 1 regression(s) reverted" in text
    assert "- users: skipped: budget" in text
    assert (
        "| orders | partial | 2 | 12/17 | $0.51 "
        "| 1:8/17 $0.12 · 2:12/17 $0.20 · 3:10/17↩ $0.19 | 3 attempts used |"
    ) in text


def _attention(data: dict) -> list[str]:
    text = render_markdown(data).split("## Needs a human")[1].split("## Tasks")[0]
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_an_ordinary_revert_is_counted_not_listed() -> None:
    """The ratchet putting the best back is the loop working: a total, not a call for help."""
    data = summary().to_json()

    assert (
        _attention(data),
        "1 regression(s) reverted by the ratchet" in render_markdown(data),
    ) == (
        ["- users: skipped: budget"],
        True,
    )


def test_a_task_that_ships_less_than_its_best_needs_a_human() -> None:
    """A task whose shipped file passes fewer tests than one of its attempts did is listed."""
    data = summary().to_json()
    data["tasks"][0] |= {"status": "guardrail", "reason": "write refused", "output": None}

    assert _attention(data)[0] == (
        "- orders: ended below its own best: ships nothing, attempt 2 passed 12; "
        "regressions at attempt(s) 3"
    )


def test_tier_cost_and_escalation_per_attempt() -> None:
    """Every attempt shows its tier and cost; a fix on another tier than the first is marked."""
    attempts = (
        AttemptRecord(
            1,
            "write",
            passed=3,
            failed=6,
            errors=0,
            total=9,
            cost_usd=Decimal("0.1"),
            tier="mid",
            improved=True,
        ),
        AttemptRecord(
            2, "fix", passed=3, failed=6, errors=0, total=9, cost_usd=Decimal("0.05"), tier="mid"
        ),
        AttemptRecord(
            3,
            "fix",
            passed=9,
            failed=0,
            errors=0,
            total=9,
            cost_usd=Decimal("0.9"),
            tier="frontier",
            improved=True,
        ),
    )
    task = TaskResult(
        "t",
        TaskStatus.PASSED,
        "",
        3,
        passed=9,
        failed=0,
        errors=0,
        total=9,
        cost_usd=Decimal("1.05"),
        output="/o.py",
        attempts=attempts,
    )
    text = render_markdown(replace(summary(), tasks=(task,)).to_json())

    assert "| 1:3/9 mid $0.10 · 2:3/9 mid $0.05 · 3:9/9 frontier↑ $0.90 |" in text
    assert "3 attempt(s) · 1 escalated to another tier · 0 regression(s)" in text


def test_seed_words_tell_a_file_at_the_output_from_an_earlier_night() -> None:
    """Seeded from the output file is not "carried over"; an earlier night's best is."""
    from_output = Seed(SeedSource.OUTPUT, None, passed=4, failed=1, errors=0, total=5)
    from_night = Seed(
        SeedSource.EARLIER_RUN, "20261120-013000-aa11", passed=5, failed=0, errors=0, total=5
    )
    tasks = (
        TaskResult(
            "a",
            TaskStatus.PARTIAL,
            "",
            0,
            passed=4,
            failed=1,
            errors=0,
            total=5,
            output="/a.py",
            seed=from_output,
        ),
        TaskResult(
            "b",
            TaskStatus.PASSED,
            "",
            0,
            passed=5,
            failed=0,
            errors=0,
            total=5,
            output="/b.py",
            seed=from_night,
        ),
    )
    data = replace(summary(), tasks=tasks).to_json()
    text = render_markdown(data)

    assert data["tasks"][0]["seed"] == {
        "source": "output",
        "run_id": None,
        "passed": 4,
        "failed": 1,
        "errors": 0,
        "total": 5,
        "skipped": 0,
    }
    assert (
        "| a | partial | seed | 4/5 | $0.00 | — | seeded from the file already at its output path |"
    ) in text
    assert (
        "| b | passed | seed | 5/5 | $0.00 | — | carried over from run 20261120-013000-aa11 |"
        in text
    )
    assert (
        "1 task(s) seeded from the file at their output · 1 carried over from an earlier run"
        in text
    )


def test_unshipped_best_and_suite_skips_are_said() -> None:
    """A best that passes nothing is marked not shipped; the suite's own skips are counted."""
    tasks = (
        TaskResult(
            "z", TaskStatus.FAILED, "2 attempts used", 1, passed=0, failed=0, errors=4, total=4
        ),
        TaskResult(
            "k",
            TaskStatus.PASSED,
            "",
            1,
            passed=3,
            failed=0,
            errors=0,
            total=3,
            output="/k.py",
            skipped=1,
        ),
    )
    text = render_markdown(replace(summary(), tasks=tasks).to_json())

    assert "| z | failed | 1 (not shipped) | 0/4 |" in text
    assert "| k | passed | 1 | 3/3 (+1 skipped by the suite) |" in text


def test_money_keeps_every_digit_a_small_cap_needs(tmp_path) -> None:
    """A $0.0555 cap and a $0.030912 spend print as such, never rounded to cents."""
    small = replace(summary(), cap_usd=Decimal("0.0555"), spent_usd=Decimal("0.030912"))
    write_summary(tmp_path, small)
    text = (tmp_path / "summary.md").read_text()

    assert "spent $0.030912 of $0.0555" in text
    assert "$0.06" not in text and "$0.03 " not in text


def test_every_task_a_stop_cut_short_needs_a_human(tmp_path) -> None:
    """Tasks cut short by a budget cap, a halt or a signal, started or not, and a prompt too
    long are each listed under Needs a human with their reason."""
    causes = (StopCause.BUDGET, StopCause.HALTED, StopCause.RUN_STOPPED, StopCause.CONTEXT_TOO_LONG)
    tasks = tuple(
        TaskResult(f"t{i}", status, f"why {i}", cause=cause)
        for i, (status, cause) in enumerate(
            zip([TaskStatus.SKIPPED, TaskStatus.PARTIAL] * 2, causes, strict=True)
        )
    )
    write_summary(tmp_path, replace(summary(), tasks=tasks))
    human = (tmp_path / "summary.md").read_text().split("## Tasks")[0]

    for i, task in enumerate(tasks):
        assert f"- t{i}: {task.status.value}: why {i}" in human


def test_batch_mode_adds_optional_fields_and_a_line_to_schema_1(tmp_path) -> None:
    """Per task whether its first write went by batch and the latency; the night's exact
    saving; the same line in summary.md and summary.html; still schema 1."""
    report = BatchReport(
        submitted=2,
        succeeded=1,
        canceled=1,
        fell_back=1,
        list_usd=Decimal("0.24"),
        cost_usd=Decimal("0.12"),
        tasks={"orders": TaskBatch("succeeded", 1830.25), "users": TaskBatch("canceled")},
    )

    data = write_summary(tmp_path, replace(summary(), batch=report))

    assert data["schema"] == 1
    assert [t["batch"] for t in data["tasks"]] == [
        {"by_batch": True, "outcome": "succeeded", "latency_s": 1830.25},
        {"by_batch": False, "outcome": "canceled", "latency_s": None},
    ]
    assert (data["batch"]["saved_usd"], data["batch"]["saved_usd_exact"]) == (0.12, "0.12")
    line = "Batch: 1 of 2 requests by batch (1 fell back to interactive) · saved $0.12"
    assert line in (tmp_path / "summary.md").read_text()
    assert line in (tmp_path / "summary.html").read_text()
    assert "batch" not in write_summary(tmp_path, summary())


def _good(tmp_path) -> dict:
    return json.loads(json.dumps(write_summary(tmp_path, summary())))


def _with(data: dict, path: tuple, value: object) -> dict:
    """A copy of `data` with the value at `path` (keys and indexes) replaced."""
    copy = json.loads(json.dumps(data))
    *parents, last = path
    node = copy
    for key in parents:
        node = node[key]
    node[last] = value
    return copy


DAMAGE = {
    "truncated": lambda d: json.dumps(d)[:200],
    "empty": lambda d: "",
    "a_list": lambda d: "[]",
    "nested_deep": lambda d: "[" * 100_000,
    "nan_spent": lambda d: json.dumps(d).replace('"spent_usd": 0.51', '"spent_usd": NaN'),
    "cost_text": lambda d: json.dumps(_with(d, ("tasks", 0, "cost_usd"), "abc")),
    "tasks_text": lambda d: json.dumps(_with(d, ("tasks",), "orders")),
    "budget_null": lambda d: json.dumps(_with(d, ("budget",), None)),
    "status_number": lambda d: json.dumps(_with(d, ("status",), 5)),
    "attempt_n_text": lambda d: json.dumps(_with(d, ("tasks", 0, "attempts", 0, "n"), "x")),
    "schema_0": lambda d: json.dumps(_with(d, ("schema",), 0)),
    "started_at_empty": lambda d: json.dumps(_with(d, ("started_at",), "")),
    "finished_at_no_offset": lambda d: json.dumps(_with(d, ("finished_at",), "2026-11-25T01:00")),
    "started_at_number": lambda d: json.dumps(_with(d, ("started_at",), 5)),
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_summary_exits_2_saying_what_to_do(tmp_path, capsys, damage: str) -> None:
    """`harness summary` on a damaged summary.json: exit 2, the file, how to rewrite it."""
    (tmp_path / "summary.json").write_text(DAMAGE[damage](_good(tmp_path)))

    code = main(["summary", str(tmp_path)])

    err = capsys.readouterr().err
    expected = (2, True, True)
    assert expected == (code, f"{tmp_path / 'summary.json'} is damaged" in err, "--resume" in err)


def test_a_newer_schema_asks_for_a_newer_harness(tmp_path, capsys) -> None:
    """A summary from a newer harness is not called damaged: the fix is an upgrade."""
    (tmp_path / "summary.json").write_text(json.dumps(_with(_good(tmp_path), ("schema",), 2)))

    code = main(["summary", str(tmp_path)])

    assert (code, "upgrade the harness" in capsys.readouterr().err) == (2, True)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


def _paths(node: object, path: tuple = ()) -> list[tuple]:
    """Every key/index path into a JSON document."""
    if isinstance(node, dict):
        pairs = list(node.items())
    elif isinstance(node, list):
        pairs = list(enumerate(node))
    else:
        return []
    return [p for key, value in pairs for p in [(*path, key), *_paths(value, (*path, key))]]


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_field_of_a_summary_replaced_reads_or_exits_2(tmp_path, data) -> None:
    """Any one value of summary.json replaced by any JSON value: a summary or exit 2."""
    good = _good(tmp_path)
    where = data.draw(st.sampled_from(_paths(good)))
    value = data.draw(_JSON)
    (tmp_path / "summary.json").write_text(json.dumps(_with(good, where, value)))

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["summary", str(tmp_path)])

    assert code in (0, 2)


@settings(max_examples=60)
@given(
    tasks=st.lists(
        st.builds(
            TaskResult,
            id=st.text("abc_-", min_size=1, max_size=8),
            status=st.sampled_from(TaskStatus),
            reason=st.text(max_size=10),
            best_attempt=st.none() | st.integers(0, 5),
            passed=st.integers(0, 20),
            total=st.integers(0, 20),
            cost_usd=st.decimals(0, 100, places=8),
            output=st.none() | st.just("/x/out.py"),
            attempts=st.lists(
                st.builds(
                    AttemptRecord,
                    n=st.integers(1, 5),
                    kind=st.sampled_from(["write", "fix"]),
                    cost_usd=st.decimals(0, 10, places=8),
                    tier=st.sampled_from(["", "mid", "frontier"]),
                    tampered=st.booleans(),
                    regressed=st.booleans(),
                    extraction_error=st.none() | st.just("no code"),
                ),
                max_size=3,
            ).map(tuple),
            cause=st.none() | st.sampled_from(StopCause),
            seed=st.none() | st.builds(Seed, source=st.sampled_from(SeedSource)),
            warnings=st.lists(st.text(max_size=5), max_size=2).map(tuple),
        ),
        max_size=3,
    ).map(tuple),
    cap=st.none() | st.decimals(0, 1000, places=2),
)
def test_every_summary_the_harness_writes_reads_back(tasks, cap) -> None:
    """load_summary accepts whatever write_summary writes (the schema is not stricter)."""
    with tempfile.TemporaryDirectory() as folder:
        written = write_summary(Path(folder), replace(summary(), tasks=tasks, cap_usd=cap))

        assert json.loads(json.dumps(written)) == load_summary(Path(folder))
