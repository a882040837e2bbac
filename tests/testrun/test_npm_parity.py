"""The npm parity corpus: real npm packages, each served as its own candidate behind the
JavaScript boundary, score per test exactly what their own runner says on the same code.

Built at test time from the registry into a temporary folder (`npm pack` of each package, one
`npm install` of the runner they name, mocha, and their assertion library, assume); nothing of
theirs is in the repository. Each package is a single-file module (index.js) whose published
tarball carries its mocha suite (test.js); the task runs mocha with its xunit reporter writing
to {results}. Skipped, with the reason, when the registry does not answer.

Not in it: fn.name, whose suite asks its module for the name, `displayName` and constructor of
the tests' own functions and objects; behind the boundary a function of the tests is a
capability to call, nothing of it can be read (docs/foreign-runners.md): such a suite says
`isolation: in_process`.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from harness.results import Outcome
from harness.tasks.spec import TaskSpec
from harness.testrun import TestLimits, run_tests
from harness.testrun.launch import bwrap_works
from tests._foreign import needs_node
from tests._jsparity import direct_outcomes, harness_outcomes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.registry,
    needs_node,
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is missing"),
    pytest.mark.skipif(not bwrap_works(), reason="the JavaScript boundary needs bubblewrap"),
]

# Small pure-JS packages with no dependencies whose tarball holds index.js and a mocha test.js.
PACKAGES = {
    "requires-port": "1.0.0",
    "millisecond": "0.1.2",
    "one-time": "0.0.4",
    "text-hex": "1.0.0",
}
RUNNER = ("mocha@10.8.2", "assume@2.3.0")
COMMAND = (
    "node",
    "node_modules/mocha/bin/mocha.js",
    "--reporter",
    "xunit",
    "--reporter-option",
    "output={results}",
    "{tests}",
)
LIMITS = TestLimits(timeout_s=300)


def _npm(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npm", *args, "--no-audit", "--no-fund", "--ignore-scripts"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TaskSpec]:
    """Each package unpacked into a folder of its own with the runner's node_modules: a task
    whose tests are its test.js, whose output (the candidate) is its index.js."""
    where = tmp_path_factory.mktemp("npm")
    runner = where / "runner"
    runner.mkdir()
    got = _npm(["install", "--no-save", "--no-package-lock", *RUNNER], runner)
    if got.returncode != 0:
        pytest.skip(f"the npm registry is unreachable: {got.stderr.strip()[-300:]}")
    tasks = {}
    for name, version in PACKAGES.items():
        packed = _npm(["pack", f"{name}@{version}", "--pack-destination", str(where)], where)
        if packed.returncode != 0:
            pytest.skip(f"the npm registry is unreachable: {packed.stderr.strip()[-300:]}")
        folder = where / name
        with tarfile.open(where / packed.stdout.strip().splitlines()[-1]) as tar:
            tar.extractall(where / f"{name}-unpacked", filter="data")
        shutil.move(where / f"{name}-unpacked" / "package", folder)
        shutil.copytree(runner / "node_modules", folder / "node_modules", symlinks=True)
        tasks[name] = TaskSpec(
            id=name.replace(".", "_"),
            base_dir=folder,
            reference=(),
            tests=(folder / "test.js",),
            output=folder / "index.js",
            support=(folder / "package.json", folder / "node_modules"),
            language="javascript",
            test_command=COMMAND,
            results="junit",
        )
    return tasks


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_an_npm_package_scores_per_test_what_its_own_runner_says(
    name: str, corpus: dict[str, TaskSpec], tmp_path: Path
) -> None:
    """The package's own index.js behind the boundary: every test of its own suite has the
    outcome mocha gives it run directly on the unpacked package, and all of them pass."""
    task = corpus[name]
    code = task.output.read_text()

    result = run_tests(task, code, limits=LIMITS)

    direct = direct_outcomes(task, code, tmp_path)
    assert harness_outcomes(result) == direct, result.output[-3000:]
    assert direct and set(direct.values()) == {Outcome.PASSED}
    assert result.error is None and not result.tampered
