"""Run a task's own test command (Go, node, ...) in the sandbox and read its structured results.

`test_command` runs in the scratch tree (tests, support and the candidate at its output path)
under the same sandbox as pytest. Placeholders: `{tests}` (an item of its own) becomes the test
paths relative to the scratch root, one argv item each; `{output}` the candidate's
scratch-relative path; `{results}` the report destination, which is /dev/fd/N: a pipe that the
harness reads and only the command's own process tree is handed. What the report says is then
checked against the ids read statically from the pristine tests and the exit status
(_fscore). docs/foreign-runners.md says what this does and does not guarantee.
"""

from __future__ import annotations

from dataclasses import replace

import structlog

from harness.results import Outcome, TestCase, TestResult
from harness.tasks import TaskSpec
from harness.testrun.expect import Expected, expected_ids
from harness.testrun.fprecheck import precheck_foreign
from harness.testrun.fscore import score
from harness.testrun.fspawn import ForeignRun, launch_foreign
from harness.testrun.gorun import run_go
from harness.testrun.jsrun import run_js_boundary, uses_js_boundary
from harness.testrun.limits import TestLimits
from harness.testrun.notices import log_tests_ran
from harness.testrun.reports import read_go_json, read_junit
from harness.testrun.scratch import Pristine, SandboxError, read_pristine

__all__ = ["is_foreign", "run_foreign"]

log = structlog.get_logger(__name__)

_RESULTS = ("go-json", "junit")
# Files whose presence decides how a toolchain builds or resolves: never the candidate's place.
_RESERVED = {"go.mod", "go.sum", "go.work", "package.json", "package-lock.json", "tsconfig.json"}


def is_foreign(task: TaskSpec) -> bool:
    """Whether the task's tests run through its own command rather than the built-in pytest."""
    return task.results != "pytest" or bool(task.test_command)


def _place(task: TaskSpec, pristine: Pristine) -> str:
    rel = task.output_rel.as_posix()
    parts = rel.split("/")
    problem = ""
    if rel.startswith("/") or ".." in parts:
        problem = "must be a relative path inside the task list's folder"
    elif parts[-1] in _RESERVED or "node_modules" in parts:
        problem = f"{parts[-1]!r} would change how the toolchain builds the tests"
    elif parts[-1].endswith("_test.go"):
        problem = "a _test.go file would add to the tests (name the output without _test)"
    elif rel in dict(pristine.files):
        problem = "it is the path of a test or support file"
    if problem:
        raise SandboxError(f"task {task.id}: output {rel} is not usable: {problem}")
    return rel


def _argv(task: TaskSpec, pristine: Pristine, place: str) -> tuple[str, ...]:
    if not task.test_command:
        raise SandboxError(
            f"task {task.id}: results {task.results!r} needs a test_command (e.g. "
            "go test -json ./... , or node --test ... --test-reporter-destination={results})"
        )
    argv: list[str] = []
    for item in task.test_command:
        if item == "{tests}":
            argv.extend(pristine.tests)
        elif "{tests}" in item:
            raise SandboxError(
                f"task {task.id}: test_command item {item!r}: {{tests}} must be an item of its "
                "own (it expands to one item per test path)"
            )
        else:
            argv.append(item.replace("{output}", place))
    return tuple(argv)


def _check_report(task: TaskSpec) -> None:
    """Defensive: task-list validation refuses all of these, but a TaskSpec can be built
    directly (tests, tools), and each would otherwise fail confusingly inside the sandbox."""
    if task.results not in _RESULTS:
        raise SandboxError(
            f"task {task.id}: a test_command needs results {' or '.join(_RESULTS)} (not "
            f"{task.results!r}); results pytest runs the built-in pytest runner, which takes "
            "no test_command"
        )
    named = any("{results}" in a for a in task.test_command)
    if task.results != "junit" and named:
        raise SandboxError(
            f"task {task.id}: {{results}} is a JUnit report's destination, but results is "
            f"{task.results!r}, which reads no report; remove it from the test_command"
        )
    if task.results == "junit" and not named:
        raise SandboxError(
            f"task {task.id}: results junit needs the test_command to write its report to "
            "{results} (e.g. --test-reporter-destination={results}); the harness reads it "
            "from a pipe the candidate's code is not given a path to"
        )


def _rejected(task: TaskSpec, expected: Expected, reason: str) -> TestResult:
    log.warning("candidate_rejected", task_id=task.id, reason=reason)
    message = f"precheck: {reason}"
    ids = expected.ids or ("(the tests)",)
    cases = tuple(TestCase(i, Outcome.ERROR, message, hidden=i in expected.hidden) for i in ids)
    return TestResult(cases=cases, error=message, rejected=True)


def run_foreign(
    task: TaskSpec,
    code: str,
    limits: TestLimits,
    kind: str,
    guard=None,
    *,
    checked=True,
    js_refused: frozenset[str] | None = None,
    go_refused: frozenset[str] | None = None,
) -> TestResult:
    """Run the task's test command against `code`; never raises for what the code does.
    `checked=False` skips the static pre-check (the hostile suite's way to test the runner);
    `js_refused`, `go_refused`: the node built-ins and Go packages the pre-check refuses
    (None: the shipped policy's)."""
    _check_report(task)
    pristine = read_pristine(task)
    place = _place(task, pristine)
    expected = expected_ids(pristine, task.results, task.language, task.id)
    language = "go" if task.results == "go-json" else task.language
    reason = precheck_foreign(language, code, js_refused, go_refused) if checked else ""
    if reason:
        return _rejected(task, expected, reason)
    if task.results == "go-json":  # built, then run apart from every source file
        result = run_go(task, pristine, place, code, expected, limits, kind, guard)
        log_tests_ran(task.id, kind, result, runner=task.results)
        return result
    if uses_js_boundary(task, kind):  # the candidate in processes of its own (jsrun)
        result = run_js_boundary(
            task,
            pristine,
            place,
            code,
            expected,
            lambda p: _argv(task, p, place),
            limits,
            kind,
            guard,
        )
        log_tests_ran(task.id, kind, result, runner=task.results)
        return result
    run = ForeignRun(
        pristine,
        place,
        code,
        _argv(task, pristine, place),
        task.results == "junit",
        limits,
        kind,
        guard,
    )
    got = launch_foreign(run)
    if task.results == "junit":
        # A reporter the clock stopped leaves half a document: nothing in it is confirmed.
        whole = got.report and not got.timed_out
        report = read_junit(got.text(got.report).encode()) if whole else read_go_json("")
        report.text = report.text or got.text(got.output)[-4000:]
    else:
        report = read_go_json(got.text(got.output))
    tests = tuple(r for r, _ in pristine.files if r.startswith(pristine.tests))
    result = score(expected, report, got, tests)
    warnings = (
        ()
        if expected.ids is not None
        else (
            f"no static collector for {task.results} tests in {task.language}: the expected test "
            "ids were taken from this run's own report",
        )
    )
    # JavaScript here ran in the test process (isolation: in_process, or no bubblewrap).
    in_process = task.language in ("javascript", "typescript") and task.results == "junit"
    result = replace(result, warnings=warnings, in_process=in_process)
    log_tests_ran(task.id, kind, result, runner=task.results)
    return result
