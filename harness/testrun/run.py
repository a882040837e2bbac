"""Run a candidate's acceptance tests in a sandbox whose results candidate code cannot fake."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import PurePosixPath

import structlog

from harness.results import Differential, Outcome, TestCase, TestResult
from harness.tasks import TaskSpec
from harness.testrun import cgroup, privilege, scratch
from harness.testrun.differential import DifferentialSettings, check, reference_code
from harness.testrun.foreign import is_foreign, run_foreign
from harness.testrun.launch import bwrap_works, fallback_caps_processes, refusal
from harness.testrun.limits import TestLimits
from harness.testrun.notices import (
    DEGRADED_WARNING,
    UNCAPPED_WARNING,
    UNSAFE_WARNING,
    log_tests_ran,
    sandbox_warnings,
)
from harness.testrun.precheck import precheck
from harness.testrun.remembered import content_key, remembered
from harness.testrun.score import Settlement
from harness.testrun.scratch import Pristine, SandboxError, candidate_place, read_pristine
from harness.testrun.session import Run, launch_all
from harness.testrun.stub import python_reference, stub_for

__all__ = [
    "SandboxError",
    "TestLimits",
    "expect_tests",
    "precheck",
    "probe_sandbox",
    "run_tests",
    "sandbox_kind",
]

log = structlog.get_logger(__name__)

Guard = Callable[[Sequence[str]], None] | None


@functools.cache
def _sweep_leftovers() -> None:
    """Once per process: clear what runs of a harness killed outright left behind."""
    folders, groups = scratch.sweep_stale(), cgroup.sweep_stale()
    if folders or groups:
        log.info("sandbox_leftovers_removed", folders=folders, cgroups=groups)


def sandbox_kind(limits: TestLimits | None = None) -> str:
    """Which sandbox runs the tests: bubblewrap ("bwrap") or the degraded "rlimits" fallback.

    Raises SandboxError when the fallback cannot run candidate code as another user and the
    operator did not accept that risk (UNSAFE_VAR): checked at start-up, before any call.
    """
    mode = (limits or TestLimits()).sandbox
    if mode != "none" and bwrap_works():
        return "bwrap"
    if mode == "bwrap":
        raise SandboxError("sandbox: bwrap was required but bubblewrap is missing or unusable")
    if not privilege.can_drop():
        if not privilege.unsafe():
            raise SandboxError(refusal())
        _warn_unsafe()
    if mode == "auto":
        _warn_degraded()
    return "rlimits"


def probe_sandbox() -> None:
    """Ask the sandbox's probes now (whether bubblewrap builds the sandbox here, and without it
    whether the fallback can drop to a throwaway uid): each answer is kept for this process
    and every process forked from it (a worker's warm process asks before it forks shards).
    The warnings `sandbox_kind` gives stay each run's own."""
    if not bwrap_works():
        privilege.can_drop()


@functools.cache
def _warn_degraded() -> None:
    log.warning("sandbox_degraded", reason=DEGRADED_WARNING)
    if not fallback_caps_processes():
        log.warning("sandbox_uncapped", reason=UNCAPPED_WARNING)


def _warn_unsafe() -> None:
    """Every run, loudly: candidate code runs as the harness's own user."""
    log.warning("sandbox_unsafe_same_user", reason=UNSAFE_WARNING)


_expected_lock = threading.Lock()
Expected = tuple[tuple[str, ...], tuple[str, ...]]  # (collected ids, ids that failed to collect)
# Keyed by what collection depends on, not by task id: tasks sharing their tests (a family of
# ports against one suite) collect once. A Future, so concurrent askers wait for one launch.
_expected_cache: dict[tuple[object, ...], Future[Expected]] = {}


BOUNDARY_NEEDS_BWRAP = (
    "isolation: boundary needs bubblewrap (the candidate's process must not see the tests' "
    "files); without it this run was in_process: detection-guarded, not isolated"
)


def boundary_for(task: TaskSpec, kind: str) -> bool:
    """Whether this run puts the candidate behind the value boundary: asked for, and a
    sandbox that can keep the tests' files out of the candidate's file system."""
    return task.isolation == "boundary" and kind == "bwrap"


def _collection_key(pristine: Pristine, place: str, kind: str) -> tuple[object, ...]:
    """What the collection sees: the pristine files and test paths, the sandbox, the stub's
    module name, and the pristine files beside it (its folder comes first on sys.path). Not
    the candidate's folder itself: tasks writing to out/a/calc.py and out/b/calc.py collect
    the same ids from the same tests."""
    folder = PurePosixPath(place).parent
    beside = tuple(sorted(r for r, _ in pristine.files if PurePosixPath(r).parent == folder))
    return (pristine.digest, pristine.tests, kind, PurePosixPath(place).name, beside)


def _expected(
    task: TaskSpec, pristine: Pristine, place: str, limits: TestLimits, kind: str, guard: Guard
) -> Expected:
    """The test ids of the pristine tests against a stub candidate, collected once per inputs
    (see `_collection_key`)."""
    key = (*_collection_key(pristine, place, kind), boundary_for(task, kind))
    with _expected_lock:
        pending = _expected_cache.get(key)
        mine = pending is None
        if pending is None:
            pending = _expected_cache[key] = Future()
    if not mine:
        return pending.result()
    try:
        found = _remembered_collect(task, pristine, place, limits, kind, guard)
    except BaseException as exc:
        with _expected_lock:  # a failure is not remembered: the next run asks again
            del _expected_cache[key]
        pending.set_exception(exc)
        raise
    pending.set_result(found)
    return found


def _remembered_collect(
    task: TaskSpec, pristine: Pristine, place: str, limits: TestLimits, kind: str, guard: Guard
) -> Expected:
    """`_collect`, remembered by content on disk (remembered.py) as well: every process that
    runs the same tests (the shards of a night on Temporal, each a process of its own; the
    next night) reuses one collection instead of launching its own. A failure is not
    remembered."""
    stub = stub_for(pristine, task.module_name, python_reference(task.reference))
    key = content_key(
        *map(str, _collection_key(pristine, place, kind)), stub, str(boundary_for(task, kind))
    )

    def collect() -> list[list[str]]:
        ids, broken = _collect(task, pristine, place, limits, kind, guard, stub)
        return [list(ids), list(broken)]

    ids, broken = remembered("expected", key, collect)
    return tuple(ids), tuple(broken)


def _collect(
    task: TaskSpec,
    pristine: Pristine,
    place: str,
    limits: TestLimits,
    kind: str,
    guard: Guard,
    stub: str,
) -> Expected:
    boundary = boundary_for(task, kind)
    tally = launch_all(
        Run(
            pristine,
            place,
            stub,
            limits,
            kind,
            collect_only=True,
            command_guard=guard,
            boundary=boundary,
        )
    )
    if tally.tamper or not tally.collected_ok:
        output = "\n".join(tally.outputs)[-2000:]
        raise SandboxError(f"task {task.id}: collecting the pristine tests failed: {output}")
    broken = tuple(sorted({e.id for e in tally.collect_errors}))
    log.info("expected_tests_collected", task_id=task.id, tests=len(tally.collected), broken=broken)
    return tuple(tally.collected), broken


def expect_tests(task: TaskSpec, limits: TestLimits | None = None, guard: Guard = None) -> None:
    """Collect the task's pristine test ids now (once per distinct tests), so the first test
    run does not wait for it: meant to run beside the task's first model call."""
    limits = limits or TestLimits()
    kind = sandbox_kind(limits)
    pristine = read_pristine(task)
    _expected(task, pristine, candidate_place(task, pristine), limits, kind, guard)


_suite_skip_cache: dict[tuple[str, str, str, str], dict[str, bool]] = {}


def _suite_skips(run: Run, task_id: str, skipped: list[str]) -> frozenset[str]:
    """Of the tests the candidate's run skipped, those the suite skips whatever the candidate:
    skipped against the stub candidate too. Each id is asked once per inputs, in one launch."""
    key = (task_id, run.pristine.digest, run.candidate_rel, run.kind, run.boundary)
    with _expected_lock:
        known = _suite_skip_cache.setdefault(key, {})
        todo = [i for i in skipped if i not in known]
    if todo:
        probe = replace(
            run,
            pristine=replace(run.pristine, tests=tuple(todo)),  # node ids are pytest arguments
            code=stub_for(run.pristine, PurePosixPath(run.candidate_rel).stem),
            expected=frozenset(todo),
            open_files=(),
        )
        tally = launch_all(probe)
        stub = {} if tally.tamper else {i: c.outcome for i, c in tally.cases.items()}
        found = {i: stub.get(i) is Outcome.SKIPPED for i in todo}
        by_suite = sorted(i for i, yes in found.items() if yes)
        log.info("suite_skips_checked", task_id=task_id, checked=len(todo), by_suite=by_suite)
        with _expected_lock:
            known.update(found)
    return frozenset(i for i in skipped if known.get(i))


def run_tests(
    task: TaskSpec,
    code: str,
    *,
    limits: TestLimits | None = None,
    precheck_extra: Callable[[str], list[str]] | None = None,
    command_guard: Guard = None,
    js_refused: frozenset[str] | None = None,
    go_refused: frozenset[str] | None = None,
    differential: DifferentialSettings | None = None,
) -> TestResult:
    """Run the task's acceptance tests against `code`; never raises for what the code does.

    `command_guard` sees every command line before the harness starts it (the operator's
    command policy) and raises to refuse it; that refusal propagates to the caller.
    `js_refused`: the node built-ins a JavaScript candidate may not load, from the operator's
    policy for this task (None: the shipped policy's list); `go_refused` the same for the Go
    packages a Go candidate may not import.
    `differential`: check the candidate against the task's reference after the tests
    (differential.py), where the settings apply to the task.
    """
    limits = limits or TestLimits()
    if is_foreign(task):  # the task's own command; the pre-check below reads Python only
        _sweep_leftovers()
        kind = sandbox_kind(limits)
        result = run_foreign(
            task, code, limits, kind, command_guard, js_refused=js_refused, go_refused=go_refused
        )
        return replace(result, warnings=(*sandbox_warnings(kind), *result.warnings))
    # Behind the boundary the in-process pre-check guards nothing (the candidate cannot reach
    # pytest or the tests) and could only refuse honest code; the operator's checks stay.
    boundary = boundary_for(task, sandbox_kind(limits))
    own = "" if boundary else precheck(code)
    reasons = [own, *(precheck_extra(code) if precheck_extra else [])]
    reasons = [r for r in reasons if r]
    if reasons:
        return _rejected(task, limits, "; ".join(reasons), command_guard)
    return _execute(task, code, limits, command_guard, differential)


def _rejected(task: TaskSpec, limits: TestLimits, reason: str, guard: Guard = None) -> TestResult:
    kind = sandbox_kind(limits)
    pristine = read_pristine(task)
    ids, _broken = _expected(task, pristine, candidate_place(task, pristine), limits, kind, guard)
    log.warning("candidate_rejected", task_id=task.id, reason=reason)
    message = f"precheck: {reason}"
    cases = _mark_hidden([TestCase(i, Outcome.ERROR, message) for i in ids], pristine)
    in_process = not boundary_for(task, kind)  # only an in-process run has this pre-check
    return TestResult(cases=cases, error=message, rejected=True, in_process=in_process)


def _mark_hidden(cases: list[TestCase], pristine: Pristine) -> tuple[TestCase, ...]:
    """Cases from the task's hidden test files, marked so (by the file in their node id)."""
    hidden = tuple(f"{path}::" for path in pristine.hidden)
    if not hidden:
        return tuple(cases)
    return tuple(replace(c, hidden=True) if c.nodeid.startswith(hidden) else c for c in cases)


def _execute(
    task: TaskSpec,
    code: str,
    limits: TestLimits,
    guard: Guard = None,
    differential: DifferentialSettings | None = None,
) -> TestResult:
    """The run itself, without the static pre-check (the hostile suite calls this directly)."""
    started = time.monotonic()
    _sweep_leftovers()
    kind = sandbox_kind(limits)
    pristine = read_pristine(task)
    place = candidate_place(task, pristine)
    ids, broken = _expected(task, pristine, place, limits, kind, guard)
    boundary = boundary_for(task, kind)
    run = Run(
        pristine,
        place,
        code,
        limits,
        kind,
        frozenset(ids),
        broken,
        command_guard=guard,
        boundary=boundary,
        observe=boundary and differential is not None and differential.applies(task.type),
    )
    tally = _launch_split(run) if boundary and pristine.hidden else launch_all(run)
    skipped = [i for i, c in tally.cases.items() if c.outcome is Outcome.SKIPPED]
    if skipped and not tally.tamper:
        for i in _suite_skips(run, task.id, skipped):
            tally.cases[i] = replace(tally.cases[i], by_suite=True)
    result = replace(_result(run, ids, tally, time.monotonic() - started), in_process=not boundary)
    if task.isolation == "boundary" and not boundary:
        result = replace(result, warnings=(*result.warnings, BOUNDARY_NEEDS_BWRAP))
    if differential is not None and differential.applies(task.type) and not result.tampered:
        result = replace(result, differential=_differ(task, run, tally, differential))
    log_tests_ran(task.id, kind, result)
    return result


def _differ(
    task: TaskSpec, run: Run, tally: Settlement, settings: DifferentialSettings
) -> Differential:
    """The candidate against the task's reference (differential.py); off, and said so, where
    the reference cannot be the oracle."""
    reference, why = reference_code(task.reference)
    if reference is None:
        found = Differential(off=why, required=settings.required)
    else:
        found = check(run, task.module_name, reference, tally.observed, settings)
    if found.off is not None:
        log.warning("differential_off", task_id=task.id, reason=found.off)
    return found


def _launch_split(run: Run) -> Settlement:
    """Boundary mode: the hidden test files in a launch of their own, with candidate
    processes of their own, after the visible ones."""
    hidden = run.pristine.hidden
    prefixes = tuple(f"{path}::" for path in hidden)
    visible = tuple(t for t in run.pristine.tests if t not in hidden)
    parts = [(visible, frozenset(i for i in run.expected if not i.startswith(prefixes)))]
    parts.append((hidden, frozenset(i for i in run.expected if i.startswith(prefixes))))
    tally = Settlement()
    for tests, expected in (p for p in parts if p[0]):
        # A hidden test's calls are never observed: their inputs could reach a fix prompt.
        observe = run.observe and tests is visible
        # The visible launch's tree holds no hidden test file: the candidate could not read
        # one there even through an object the tests passed in.
        left_out = set(hidden) - set(tests)
        files = tuple(f for f in run.pristine.files if f[0] not in left_out)
        pristine = replace(run.pristine, tests=tests, files=files)
        part = replace(run, pristine=pristine, expected=expected, observe=observe)
        _fold(tally, launch_all(part))
    return tally


def _fold(tally: Settlement, part: Settlement) -> None:
    """Add one launch_all's settlement to the run's."""
    tally.cases.update(part.cases)
    tally.collected.extend(part.collected)
    tally.collect_errors.extend(part.collect_errors)
    tally.collected_ok = tally.collected_ok or part.collected_ok
    tally.tamper.extend(part.tamper)
    tally.outputs.extend(part.outputs)
    tally.timed_out = tally.timed_out or part.timed_out
    tally.stop_reason = tally.stop_reason or part.stop_reason
    tally.first_tail = tally.first_tail or part.first_tail
    tally.observed.extend(part.observed)


def _uncollected_files(run: Run, tally: Settlement) -> list[TestCase]:
    """A test file whose ids come from the run's own collection (the stub's failed) and
    whose collection failed in this run too: one error under the file's name, so a
    candidate that breaks a file's collection never loses that file from the total."""
    found: dict[str, TestCase] = {}
    for err in tally.collect_errors:
        if err.id not in run.open_files or err.id in found:
            continue
        if not any(i.startswith(f"{err.id}::") for i in tally.cases):
            found[err.id] = TestCase(
                err.id, Outcome.ERROR, f"collection error: {err.msg}", err.details
            )
    return list(found.values())


def _missing(nodeid: str, tally: Settlement) -> TestCase:
    for err in tally.collect_errors:
        if not err.id or nodeid.startswith(f"{err.id}::"):
            return TestCase(nodeid, Outcome.ERROR, f"collection error: {err.msg}", err.details)
    if tally.stop_reason:
        return TestCase(nodeid, Outcome.ERROR, tally.stop_reason, tally.first_tail)
    if not tally.collected_ok:
        return TestCase(
            nodeid,
            Outcome.ERROR,
            "collection did not complete: the test process "
            "stopped while importing the tests or the candidate",
            tally.first_tail,
        )
    return TestCase(nodeid, Outcome.ERROR, "the test did not run (the test process stopped early)")


def _unsuperseded(ids: tuple[str, ...], extra: list[str], tally: Settlement) -> tuple[str, ...]:
    """The expected ids less those of a parametrized test whose run collected other
    parameters (its parameters come from the candidate's data: the stub had none)."""
    rerolled = {i.partition("[")[0] for i in extra if "[" in i}
    return tuple(
        i for i in ids if i in tally.cases or "[" not in i or i.partition("[")[0] not in rerolled
    )


def _result(run: Run, ids: tuple[str, ...], tally: Settlement, duration: float) -> TestResult:
    extra = [i for i in tally.cases if i not in run.expected]
    if run.boundary:  # a stub's parametrization that the candidate's data replaced
        ids = _unsuperseded(ids, extra, tally)
    cases = [tally.cases.get(i) or _missing(i, tally) for i in (*ids, *extra)]
    cases += _uncollected_files(run, tally)
    error = None
    if tally.tamper:
        error = f"tampered: {tally.tamper[0]}"
        cases = [TestCase(c.nodeid, Outcome.ERROR, error) for c in cases]
    elif tally.timed_out or tally.stop_reason:
        error = f"timeout: {tally.stop_reason}" if tally.timed_out else tally.stop_reason
    warnings = sandbox_warnings(run.kind)
    if run.open_files:
        warnings += (
            f"test ids of {', '.join(run.open_files)} could not be collected against a stub "
            "candidate, so they are taken from this run's own collection",
        )
    return TestResult(
        cases=_mark_hidden(cases, run.pristine),
        output="\n".join(tally.outputs),
        error=error,
        timed_out=tally.timed_out,
        tampered=bool(tally.tamper),
        duration_s=duration,
        warnings=warnings,
    )
