"""A QuixBugs-shaped task on disk: a conftest that skips slow-marked tests unless `--runslow`."""

from __future__ import annotations

import textwrap
from pathlib import Path

# QuixBugs' own conftest.py, cut to what matters here: the option and the skip it drives.
CONFTEST = """\
import pytest


def pytest_addoption(parser):
    parser.addoption("--correct", action="store_true")
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_configure(config):
    pytest.use_correct = config.getoption("correct")
    config.addinivalue_line("markers", "slow: mark test as slow to run")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="need --runslow option to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
"""

TESTS = """\
import pytest

from knapsack import knapsack

CASES = [
    (100, [(60, 10), (50, 8), (20, 4), (20, 4), (8, 3), (3, 2)], 19),
    (40, [(30, 10), (50, 5), (10, 20), (40, 25)], 30),
    (750, [(70, 135), (73, 139), (77, 149), (80, 150), (82, 156)], 729),
]


@pytest.mark.parametrize("capacity,items,expected", CASES)
def test_knapsack(capacity, items, expected):
    assert knapsack(capacity, items) == expected


@pytest.mark.slow
def test_knapsack_big():
    items = [(w, w + 3) for w in range(1, 400)]
    assert knapsack(6404180, items) == sum(v for _, v in items)
"""

CORRECT = """\
def knapsack(capacity, items):
    best = [0] * (capacity + 1)
    for weight, value in items:
        for room in range(capacity, weight - 1, -1):
            best[room] = max(best[room], best[room - weight] + value)
    return best[capacity]
"""

BUGGY = CORRECT.replace("range(capacity, weight - 1, -1)", "range(capacity, weight, -1)")

TASKS = """\
tasks:
  - id: knapsack
    reference: python_programs/knapsack.py
    tests: python_testcases/test_knapsack.py
    support: conftest.py
    output: fixed/knapsack.py
    solution: correct_python_programs/knapsack.py
    max_attempts: 2
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def quixbugs(base: Path, tests: str = TESTS) -> Path:
    """The repository's layout in `base`; returns the task list."""
    write(base / "conftest.py", CONFTEST)
    write(base / "python_programs" / "knapsack.py", BUGGY)
    write(base / "correct_python_programs" / "knapsack.py", CORRECT)
    write(base / "python_testcases" / "test_knapsack.py", tests)
    return write(base / "tasks.yaml", TASKS)
