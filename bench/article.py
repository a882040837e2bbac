"""The published design's own pieces, as the article shows them: EvalResult, its
BestTracker, its code extractor, its pytest runner and its fix prompt.

Kept apart from the harness on purpose: the baseline must not inherit the harness's
improvements (placeholder rejection, sandboxing, focused failures).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.pyast import parse_module
from harness.tasks import TaskSpec

__all__ = [
    "ArticleTracker",
    "EvalResult",
    "extract_code",
    "failed_sections",
    "fix_prompt",
    "run_pytest",
]

_FENCED = re.compile(r"```(?:python)?\s*\n(.*?)```", re.DOTALL)
_FAILED = re.compile(r"(?:FAILED|ERROR)\s+\S+::(\S+)")  # the article's regex, verbatim
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$")  # pytest's header above each failure's traceback
_BANNER = re.compile(r"^={3,}.*={3,}$")  # FAILURES, ERRORS, short test summary info, totals
_COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")
TIMEOUT_S = 120


@dataclass(frozen=True)
class EvalResult:
    passed: bool
    total: int
    failed: int
    errors: int
    output: str  # raw pytest output: fed back into fix prompts

    @property
    def passed_count(self) -> int:
        return self.total - self.failed - self.errors


class ArticleTracker:
    """Track best attempt across retries. Never go backwards (the article's, verbatim logic)."""

    def __init__(self) -> None:
        self.best_code: str | None = None
        self.best_passed: int = -1
        self.best_failed: float = float("inf")
        self.best_result: EvalResult | None = None

    def update(self, code: str, result: EvalResult) -> bool:
        """Record a new attempt. Returns True if this is the new best."""
        passed = result.total - result.failed - result.errors
        if passed > self.best_passed or (
            passed == self.best_passed and result.failed < self.best_failed
        ):
            self.best_code = code
            self.best_passed = passed
            self.best_failed = result.failed
            self.best_result = result
            return True
        return False


def extract_code(response: str) -> str | None:
    """The article's extractor: first fenced block, else the whole reply; ast-checked.
    Returns None where the article's raises SyntaxError (the attempt is lost)."""
    match = _FENCED.search(response)
    candidate = match.group(1).strip() if match else response.strip()
    try:
        # The harness's serialised parse: CPython 3.11's ast.parse, run on two threads at once,
        # can raise a spurious SystemError (recursion depth mismatch) and lose the attempt.
        parse_module(candidate)
    except (SyntaxError, ValueError):
        return None
    return candidate


def _copy(spec: TaskSpec, path: Path, root: Path) -> None:
    target = root / path.relative_to(spec.base_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        shutil.copytree(path, target, dirs_exist_ok=True)
    else:
        shutil.copyfile(path, target)


def _parse(output: str, returncode: int) -> EvalResult:
    """Parse pytest's summary line: "X passed, Y failed, Z errors"."""
    counts = {"passed": 0, "failed": 0, "errors": 0}
    summary = next((line for line in reversed(output.splitlines()) if _COUNT.search(line)), "")
    for number, word in _COUNT.findall(summary):
        counts["errors" if word.startswith("error") else word] += int(number)
    failed, errors = counts["failed"], counts["errors"]
    total = counts["passed"] + failed + errors
    ok = returncode == 0 and failed == 0 and errors == 0 and total > 0
    return EvalResult(ok, total, failed, errors, output)


def run_pytest(spec: TaskSpec, code: str, timeout: int = TIMEOUT_S) -> EvalResult:
    """`python -m pytest TESTS -v --tb=short -q` in a plain scratch copy: no sandbox.

    Plugin autoload is off so the dev venv's plugins do not slow the baseline down."""
    with tempfile.TemporaryDirectory(prefix="bench-pytest-") as tmp:
        root = Path(tmp)
        for path in (*spec.tests, *spec.support):
            _copy(spec, path, root)
        candidate = root / spec.output_rel
        candidate.parent.mkdir(parents=True, exist_ok=True)
        candidate.write_text(code)
        tests = [str(t.relative_to(spec.base_dir)) for t in spec.tests]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": f"{candidate.parent}{os.pathsep}{root}",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        args = [sys.executable, "-m", "pytest", *tests, "-v", "--tb=short", "-q"]
        try:
            proc = subprocess.run(
                [*args, "-p", "no:cacheprovider"],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=root,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return EvalResult(False, 1, 0, 1, f"timeout after {timeout}s")  # an error, as published
        return _parse(proc.stdout + proc.stderr, proc.returncode)


def _extract_failed_tests(pytest_output: str) -> list[str]:
    """Extract names of failed/errored tests from pytest output (the article's)."""
    failed = []
    for line in pytest_output.splitlines():
        m = _FAILED.match(line)
        if m:
            failed.append(m.group(1))
    return failed


def failed_sections(pytest_output: str) -> str:
    """The article's final fix feedback: "extract only the failed test names, filter the
    pytest output to relevant sections": each failed test's traceback section, then the
    failed tests' names. Passing tests, progress dots and the totals line are left out."""
    failed = _extract_failed_tests(pytest_output)
    last = [name.split("::")[-1] for name in failed]  # a class's test: Class::test
    names = {name.split("[")[0] for name in last} | set(last)
    kept: list[str] = []
    keep = False
    for line in pytest_output.splitlines():
        if _BANNER.match(line):
            keep = False
        elif header := _SECTION.match(line):
            title = header.group(1).split(".")[-1].split(" ")[-1]
            keep = title in names or title.split("[")[0] in names
        if keep:
            kept.append(line)
    listed = [line for line in pytest_output.splitlines() if _FAILED.match(line)]
    return "\n".join([*kept, "", *listed]).strip() if listed else pytest_output


FIX_TEMPLATE = """Fix the following test failures in this {platform} service code.
## pytest output (these tests must pass)
```
{output}
```
## Current service code (fix this file)
```python
{code}
```
## Acceptance tests (read-only, do NOT modify these)
{tests}
Rules:
- Fix the service code so ALL tests pass
- Do NOT change the test file, only fix the service implementation
- Output the complete fixed service file
"""


def fix_prompt(spec: TaskSpec, code: str, output: str, platform: str = "target-platform") -> str:
    """The article's fix prompt around `output` (the filtered sections as published, or the
    whole run for the abandoned first version). Code and tests are fenced (the article
    pastes them bare) so the simulator finds the code to fix as the first block."""
    tests = "\n".join(f"```python\n{p.read_text().rstrip()}\n```" for p in spec.tests)
    return FIX_TEMPLATE.format(platform=platform, output=output.rstrip(), code=code, tests=tests)
