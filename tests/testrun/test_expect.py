"""The pristine tests' expected ids: collected once per distinct test content, not per task."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from harness.testrun import expect_tests, run_tests
from tests.testrun.test_run import FAST, GOOD, TESTS, make_task, write


def _collections(logs: list[dict]) -> list[str]:
    return [e["task_id"] for e in logs if e["event"] == "expected_tests_collected"]


def test_tasks_sharing_their_tests_collect_them_once(tmp_path: Path) -> None:
    """Four tasks (ids and folders apart) with the same tests, run at once: one collection."""
    tests = TESTS + f"\n    # {tmp_path.name}\n"  # content no other test has collected
    specs = [replace(make_task(tmp_path / f"t{i}", tests), id=f"port-{i}") for i in range(4)]

    with capture_logs() as logs, ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda s: run_tests(s, GOOD, limits=FAST), specs))

    assert [r.passed for r in results] == [3, 3, 3, 3]
    assert len(_collections(logs)) == 1


def test_different_tests_are_collected_apart(tmp_path: Path) -> None:
    """Other test content is another collection, with its own ids."""
    one = replace(make_task(tmp_path / "a", TESTS + f"\n    # {tmp_path.name}\n"), id="one")
    two = replace(
        make_task(
            tmp_path / "b",
            TESTS + f"\n\n    def test_more():\n        assert 1\n    # {tmp_path.name}\n",
        ),
        id="two",
    )

    with capture_logs() as logs:
        totals = [run_tests(s, GOOD, limits=FAST).total for s in (one, two)]

    assert totals == [3, 4]
    assert sorted(_collections(logs)) == ["one", "two"]


def test_expect_tests_warms_the_first_run(tmp_path: Path) -> None:
    """After expect_tests, the task's test run collects nothing more."""
    spec = make_task(tmp_path, TESTS + f"\n    # {tmp_path.name}\n")

    with capture_logs() as logs:
        expect_tests(spec, FAST)
        before = len(_collections(logs))
        result = run_tests(spec, GOOD, limits=FAST)

    assert (before, len(_collections(logs)), result.passed) == (1, 1, 3)


def test_tasks_writing_to_different_folders_share_one_collection(tmp_path: Path) -> None:
    """Outputs out/a/calc.py and out/b/calc.py against the same tests: collected once."""
    tests = TESTS + f"\n    # {tmp_path.name}\n"
    specs = [
        replace(make_task(tmp_path / name, tests, output=f"out/{name}/calc.py"), id=name)
        for name in ("a", "b")
    ]

    with capture_logs() as logs:
        passed = [run_tests(s, GOOD, limits=FAST).passed for s in specs]

    assert (passed, len(_collections(logs))) == ([3, 3], 1)


def test_a_support_file_beside_the_candidate_is_part_of_the_key(tmp_path: Path) -> None:
    """Same tests and support files, but one candidate's folder holds a support file (which
    its folder, first on sys.path, would shadow the root with): collected apart."""
    tests = TESTS + f"\n    # {tmp_path.name}\n"
    specs = []
    for name, output in (("beside", "out/calc.py"), ("apart", "out/x/calc.py")):
        helper = write(tmp_path / name / "out" / "helper.py", "X = 1\n")
        task = make_task(tmp_path / name, tests, output=output, support=(helper,))
        specs.append(replace(task, id=name))

    with capture_logs() as logs:
        passed = [run_tests(s, GOOD, limits=FAST).passed for s in specs]

    assert (passed, sorted(_collections(logs))) == ([3, 3], ["apart", "beside"])


def test_another_process_reuses_the_remembered_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that never collected these tests (a fresh shard of a distributed night) finds
    the collection remembered on disk and launches none of its own."""
    spec = make_task(tmp_path, TESTS + f"\n    # {tmp_path.name}\n")
    with capture_logs() as logs:
        first = run_tests(spec, GOOD, limits=FAST)
        monkeypatch.setattr("harness.testrun.run._expected_cache", {})  # as in a new process
        second = run_tests(spec, GOOD, limits=FAST)

    assert (first.passed, second.passed, len(_collections(logs))) == (3, 3, 1)


def test_a_remembered_answer_is_keyed_by_the_runners_own_code(tmp_path: Path) -> None:
    """An upgraded test runner never reuses an answer its previous code gave: the code digest
    under every key changes with any code file, and with nothing else."""
    from harness.testrun.remembered import code_digest

    (tmp_path / "child").mkdir()
    (tmp_path / "child" / "boot.py").write_text("A = 1\n")
    (tmp_path / "notes.txt").write_text("x")
    before = code_digest(tmp_path)
    (tmp_path / "notes.txt").write_text("y")
    unchanged = code_digest(tmp_path)
    (tmp_path / "child" / "boot.py").write_text("A = 2\n")

    assert (unchanged == before, code_digest(tmp_path) == before) == (True, False)
