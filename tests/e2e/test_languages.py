"""End to end on the simulator for Go and JavaScript nights: counts, build errors, the ratchet,
review, budget and summary behave as for Python, checked against the test runners run directly."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.cli import main

TASKS = Path(__file__).resolve().parents[2] / "tasks"

pytestmark = pytest.mark.slow


def _go_direct(scratch: Path, task: dict) -> tuple[int, int]:
    """`go test -json ./...` in the task's package folder: (passed, failed) top-level tests."""
    package = scratch / Path(task["output"]).parent
    out = _run(package, ["go", "test", "-json", "-count=1", "./..."], GOPROXY="off", GOFLAGS="")
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    top = [e for e in events if e.get("Test") and "/" not in e["Test"]]
    return _count(top, lambda e: e["Action"] == "pass", lambda e: e["Action"] == "fail")


def _node_direct(scratch: Path, task: dict) -> tuple[int, int]:
    """`node --test` on the task's test file (TAP): (passed, failed) top-level tests."""
    out = _run(scratch, ["node", "--test", "--test-reporter=tap", task["tests"]])
    lines = out.splitlines()  # top-level results are the unindented `ok N` / `not ok N` lines
    return _count(lines, re.compile(r"ok \d+ - ").match, re.compile(r"not ok \d+ - ").match)


def _run(cwd: Path, argv: list[str], **env: str) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=300
    )
    return done.stdout


def _count(items: list, passed: Callable, failed: Callable) -> tuple[int, int]:
    return sum(1 for i in items if passed(i)), sum(1 for i in items if failed(i))


@dataclass(frozen=True)
class Lang:
    """One example night: where it lives, how its runner is run directly, which seeds show what."""

    name: str  # the task list's language
    example: Path
    tool: str
    suffix: str
    direct: Callable[[Path, dict], tuple[int, int]]
    test_def: re.Pattern[str]  # a top-level test in the task's test file
    revert_seed: int  # a night where `revert_task` regresses and the ratchet reverts it
    revert_task: str
    passing: tuple[str, ...]  # seed (and --only) of a night where every task passes
    broken_task: str
    breakage: str  # appended to that task's solution: it parses, but never builds or loads


GO = Lang(
    "go",
    TASKS / "go_example",
    "go",
    ".go",
    _go_direct,
    re.compile(r"^func Test\w+\(t \*testing\.T\)", re.M),
    6,
    "roman",
    ("--seed", "2", "--only", "wordfreq"),
    "rle",
    "\nvar _ = undefinedHelper()\n",
)
JS = Lang(
    "javascript",
    TASKS / "js_example",
    "node",
    ".mjs",
    _node_direct,
    re.compile(r"^test\(", re.M),
    10,
    "intervals",
    ("--seed", "5"),
    "intervals",
    '\nimport { missing } from "./no_such_module.mjs";\nexport const m = missing;\n',
)


def _param(lang: Lang):
    reason = f"{lang.tool} is not installed: the {lang.name} example's tests cannot run"
    return pytest.param(
        lang, id=lang.name, marks=pytest.mark.skipif(shutil.which(lang.tool) is None, reason=reason)
    )


@dataclass(frozen=True)
class Night:
    code: int
    summary: dict
    root: Path
    tasks: Path

    def task(self, task_id: str) -> dict:
        return next(t for t in self.summary["tasks"] if t["id"] == task_id)

    def events(self) -> list[dict]:
        return [json.loads(line) for line in (self.root / "events.jsonl").read_text().splitlines()]

    def attempt_file(self, task_id: str, n: int, lang: Lang) -> Path:
        return self.root / "attempts" / task_id / f"{n}{lang.suffix}"


def copy_example(lang: Lang, where: Path) -> Path:
    """A private copy of the example, so shipped outputs land in tmp; without the outputs an
    earlier night shipped into the checkout (which a night would take as its starting point),
    so no test depends on what a README walk-through left behind."""
    outputs = {
        (lang.example / t["output"]).resolve()
        for t in yaml.safe_load((lang.example / "tasks.yaml").read_text())["tasks"]
    }

    def shipped(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if (Path(folder) / n).resolve() in outputs}

    shutil.copytree(lang.example, where / lang.name, ignore=shipped)
    return where / lang.name / "tasks.yaml"


def night(tasks: Path, where: Path, *extra: str) -> Night:
    runs = where / "runs"
    argv = ["run", str(tasks), "--provider", "sim", "--run-dir", str(runs), "--concurrency", "2"]
    code = main([*argv, *extra])
    root = (runs / "latest").resolve()
    return Night(code, json.loads((root / "summary.json").read_text()), root, tasks)


def task_entry(tasks: Path, task_id: str) -> dict:
    return next(t for t in yaml.safe_load(tasks.read_text())["tasks"] if t["id"] == task_id)


def scored(task: dict) -> list[dict]:
    return [a for a in task["attempts"] if a["extraction_error"] is None]


@pytest.fixture(scope="module", params=[_param(GO), _param(JS)])
def lang(request) -> Lang:
    return request.param


@pytest.fixture(scope="module")
def reverting(lang: Lang, tmp_path_factory) -> Night:
    """The example's night at the seed where the ratchet reverts a regression (run once)."""
    where = tmp_path_factory.mktemp(f"night-{lang.name}")
    return night(copy_example(lang, where), where, "--seed", str(lang.revert_seed))


def test_attempt_counts_equal_the_test_runner_run_directly(
    lang: Lang, reverting: Night, tmp_path: Path
) -> None:
    """Each recorded candidate of the reverting task, tested by `go test -json` / `node --test`
    in a copy of the example, passes and fails exactly what the summary says for it."""
    task = reverting.task(lang.revert_task)
    entry = task_entry(reverting.tasks, lang.revert_task)
    attempts = [a for a in scored(task) if a["test_error"] is None]
    assert len(attempts) >= 2

    for attempt in attempts:
        scratch = tmp_path / str(attempt["n"])
        shutil.copytree(lang.example, scratch, ignore=shutil.ignore_patterns("_solutions"))
        candidate = reverting.attempt_file(lang.revert_task, attempt["n"], lang)
        (scratch / entry["output"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(candidate, scratch / entry["output"])
        passed, failed = lang.direct(scratch, entry)

        recorded = (attempt["passed"], attempt["failed"], attempt["errors"], attempt["total"])
        assert recorded == (passed, failed, 0, passed + failed), attempt["n"]


def test_a_candidate_that_does_not_build_is_an_attempt_with_every_test_errored(
    lang: Lang, tmp_path: Path
) -> None:
    """A Go compile error / a JS module that fails to load is recorded as an attempt whose
    every test errored (none passed or failed), not a crash; the task ends failed, unshipped."""
    tasks = copy_example(lang, tmp_path)
    entry = task_entry(tasks, lang.broken_task)
    solution = tasks.parent / entry["solution"]
    solution.write_text(solution.read_text() + lang.breakage)
    tests = len(lang.test_def.findall((tasks.parent / entry["tests"]).read_text()))

    result = night(tasks, tmp_path, "--seed", "2", "--only", lang.broken_task)

    task = result.task(lang.broken_task)
    assert (result.code, result.summary["status"]) == (1, "completed")
    assert (task["status"], task["passed"], task["output"]) == ("failed", 0, None)
    assert scored(task)
    for attempt in scored(task):
        counts = (attempt["passed"], attempt["failed"], attempt["errors"], attempt["total"])
        assert counts == (0, 0, tests, tests)
        assert result.attempt_file(lang.broken_task, attempt["n"], lang).is_file()


def test_the_ratchet_reverts_a_regression_and_ships_the_best(lang: Lang, reverting: Night) -> None:
    """The seed's regression is reverted (flagged, logged) and each task ships its best
    attempt's file, whose pass count is the highest of the night."""
    task = reverting.task(lang.revert_task)
    regressed = [a for a in task["attempts"] if a["regressed"]]
    reverted = [
        e["attempt"]
        for e in reverting.events()
        if e["event"] == "attempt_reverted" and e["task_id"] == lang.revert_task
    ]
    assert regressed and all(a["passed"] < task["passed"] for a in regressed)
    assert reverted == [a["n"] for a in regressed]
    for shipped in reverting.summary["tasks"]:
        assert shipped["passed"] == max(a["passed"] for a in scored(shipped))
        if shipped["output"] is None:  # no attempt passed a test: nothing is shipped
            assert shipped["passed"] == 0
            continue
        best = reverting.attempt_file(shipped["id"], shipped["best_attempt"], lang)
        assert Path(shipped["output"]).read_text() == best.read_text()


def test_review_runs_on_the_first_attempt_and_violations_are_rewritten(
    lang: Lang, reverting: Night
) -> None:
    """Only attempt 1 is reviewed, once; a rewrite is bought exactly when the review listed
    violations."""
    calls = [e for e in reverting.events() if e["event"] == "call_finished"]
    outcomes = set()
    for task in reverting.summary["tasks"]:
        steps = [(c["step"], c["attempt"]) for c in calls if c["task_id"] == task["id"]]
        first = task["attempts"][0]
        outcomes.add(first["review"])
        assert all(a["review"] is None for a in task["attempts"][1:])
        assert [s for s in steps if s[0] == "review"] == (
            [("review", 1)] if first["review"] else []
        )
        rewritten = first["review"] == "violations"
        assert [s for s in steps if s[0] == "rewrite"] == ([("rewrite", 1)] if rewritten else [])
    assert outcomes & {"clean", "violations"}


def test_summary_fields_and_exit_code_1_for_a_partial_night(lang: Lang, reverting: Night) -> None:
    """summary.json follows schema 1; a night with a task not fully passing exits 1; the run's
    spend is the tasks' costs."""
    summary = reverting.summary
    statuses = {t["id"]: t["status"] for t in summary["tasks"]}

    assert reverting.code == 1
    assert (summary["schema"], summary["provider"], summary["status"]) == (1, "sim", "completed")
    assert statuses[lang.revert_task] == "partial"
    assert summary["budget"]["spent_usd"] == pytest.approx(
        sum(t["cost_usd"] for t in summary["tasks"]), abs=1e-5
    )
    for task in summary["tasks"]:
        passed = task["passed"] == task["total"] > 0
        assert task["status"] == ("passed" if passed else "partial" if task["passed"] else "failed")
        assert (task["reason"] == "") == passed


def test_a_night_where_every_task_passes_exits_0(lang: Lang, tmp_path: Path) -> None:
    """Every selected task passing all its tests is exit 0, as for Python."""
    result = night(copy_example(lang, tmp_path), tmp_path, *lang.passing)

    ran = [t for t in result.summary["tasks"] if t["cause"] != "filtered"]
    assert result.code == 0
    assert ran and all(t["status"] == "passed" and t["output"] for t in ran)


def test_a_tight_budget_stops_the_night_with_exit_3(lang: Lang, tmp_path: Path) -> None:
    """A cap with room for one call at a time stops the night before crossing it: exit 3,
    budget_stopped, and the calls' costs stay under the cap."""
    cap = 0.34  # a write or fix on mid reserves ~$0.33; the sim's calls cost under a cent
    tasks = copy_example(lang, tmp_path)

    result = night(tasks, tmp_path, "--seed", str(lang.revert_seed), "--budget-usd", str(cap))

    calls = [float(e["cost_usd"]) for e in result.events() if e["event"] == "call_finished"]
    stopped = [t for t in result.summary["tasks"] if t["cause"] == "budget"]
    assert (result.code, result.summary["status"]) == (3, "budget_stopped")
    assert 0 < result.summary["budget"]["spent_usd"] <= cap
    assert 0 < sum(calls) <= cap
    assert stopped and all(t["reason"].startswith("budget: run budget cap $0.34") for t in stopped)


def test_non_python_code_gets_no_python_parse_warning(lang: Lang, reverting: Night) -> None:
    """No task is flagged as code that does not parse; the checks limited to Python are noted
    once per run in the events log instead."""
    human = (reverting.root / "summary.md").read_text().split("## Tasks")[0]
    limited = [
        (e["event"], e["language"])
        for e in reverting.events()
        if e["event"] in ("code_check_limited", "scar_check_limited")
    ]

    assert not [w for t in reverting.summary["tasks"] for w in t["warnings"] if "[parse]" in w]
    assert "does not parse" not in human
    assert sorted(limited) == [("code_check_limited", lang.name), ("scar_check_limited", lang.name)]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("example", sorted(p.parent.name for p in TASKS.glob("*/tasks.yaml")))
def test_every_example_output_is_ignored_by_git(example: str) -> None:
    """What a night ships for an example never shows in `git status` or gets committed."""
    tasks = TASKS / example / "tasks.yaml"
    outputs = [
        str(TASKS / example / t["output"]) for t in yaml.safe_load(tasks.read_text())["tasks"]
    ]
    inside = subprocess.run(["git", "-C", str(TASKS), "rev-parse"], capture_output=True)
    if inside.returncode != 0:
        pytest.skip("not a git checkout")

    check = subprocess.run(
        ["git", "-C", str(TASKS), "check-ignore", "--no-index", *outputs],
        capture_output=True,
        text=True,
    )

    assert sorted(check.stdout.split()) == sorted(outputs)
