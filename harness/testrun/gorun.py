"""Go tests judged by construction: build the test binary in one launch, run it in another.

1. Build: `go test -c` per test package, in the sandbox, with the tests, support and candidate,
   plus one file of the harness's own: for each test `TestX` a wrapper `TestHarness<key>_TestX`
   that counts its runs and calls `TestX(t)` and, only when this was its first and only run in
   the process, the binary's flags read back are the harness's, and it returned normally with
   neither it nor a subtest failed (checked in its last cleanup), prints a nonce drawn for that
   test alone; a second run or a changed flag prints the build's tamper mark instead. No
   candidate code runs while building (no cgo, no generate).
2. Run: the binary alone, exec-only (mode 0111: run, never read), in a launch with no source,
   no test file (visible or hidden) and no /proc (bubblewrap), with arguments the harness
   chooses (`-test.run` naming the wrappers, `-test.v`, `-test.paniconexit0`).
A test passes only if its nonce is printed. The candidate cannot print it: the nonce is in no
file it can read, not in its arguments or environment, and only in the wrapper's code, which
runs after `TestX` returned. Rewriting `os.Args` in `init` (`-h`, `-test.run=^$`), exiting
early, a forged transcript, `runtime.Goexit` in a failing test: no nonce, so no pass. A test
run twice to pass the second time (`-test.count`, `-test.cpu`, `flag.Set`), after learning
from the first run's output: the tamper mark, so the run is tampered. A binary
that dies mid-run is run again for the tests it did not reach.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from harness.results import Outcome, TestCase, TestResult
from harness.tasks import TaskSpec
from harness.testrun.expect import Expected, _go_ids, _strip_comments
from harness.testrun.fspawn import OUT, ForeignRun, Launched, launch_foreign
from harness.testrun.limits import TestLimits
from harness.testrun.scratch import Pristine

__all__ = ["run_go"]

_PACKAGE = re.compile(r"(?m)^package\s+(\w+)")
_BINARY = "pkg.test"
_RUN = re.compile(r"^=== RUN\s+(\S+)\s*$")
_END = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)")
_RAN_TWICE = (
    "a test ran twice in one process, or the test binary's flags were changed from inside it"
)
_NOISE = ("=== RUN", "=== PAUSE", "=== CONT", "--- FAIL", "--- PASS", "--- SKIP")


@dataclass
class _Package:
    """One folder of tests: its Go package names and its tests in file order."""

    folder: str
    tests: dict[str, str] = field(default_factory=dict)  # test name → its file's package


@dataclass
class _Plan:
    """What one build fixes: wrapper names and nonces (never shown to the candidate)."""

    key: str
    nonces: dict[str, str]
    tamper: str = field(default_factory=lambda: secrets.token_hex(16))  # a test ran twice

    def wrapper(self, test: str) -> str:
        return f"TestHarness{self.key}_{test}"


def _packages(pristine: Pristine) -> list[_Package]:
    found: dict[str, _Package] = {}
    for rel, data in pristine.files:
        if rel not in pristine.tests:
            continue
        text = _strip_comments(data.decode("utf-8", errors="replace"))
        package = _PACKAGE.search(text)
        folder = PurePosixPath(rel).parent.as_posix()
        for name, _ in _go_ids(rel, text):
            if package:
                found.setdefault(folder, _Package(folder)).tests[name] = package.group(1)
    return list(found.values())


# The flags the harness runs the binary with, as `flag` reads them back inside it: a test that
# finds one changed (from `init`, or by `flag.Set` during a run) confirms nothing.
_FLAGS = (("test.count", "1"), ("test.cpu", ""), ("test.paniconexit0", "true"), ("test.v", "true"))


def _wrappers(package: _Package, plan: _Plan) -> dict[str, bytes]:
    """One harness file per Go package of the folder (a folder may hold `x` and `x_test`)."""
    files: dict[str, bytes] = {}
    names = sorted(set(package.tests.values()))
    for n, name in enumerate(names):
        tests = [t for t, p in package.tests.items() if p == name]
        body = [_go_header(name, plan.key)]
        body += [_go_wrapper(test, plan) for test in tests]
        files[f"{package.folder}/zz_harness_{plan.key}_{n}_test.go"] = "\n".join(body).encode()
    return files


def _go_header(package: str, key: str) -> str:
    """The imports (aliased by the key: no candidate name can clash) and the flag re-check."""
    imports = "".join(f'\tharness{p}{key} "{p}"\n' for p in ("flag", "fmt", "testing"))
    checks = " &&\n\t\t".join(
        f'harnessflag{key}.Lookup("{f}") != nil && '
        f'harnessflag{key}.Lookup("{f}").Value.String() == "{v}"'
        for f, v in _FLAGS
    )
    return (
        f'package {package}\n\nimport (\n{imports}\tharnessatomic{key} "sync/atomic"\n)\n\n'
        f"func harnessFlagsKept{key}() bool {{\n\treturn {checks}\n}}\n"
    )


def _go_wrapper(test: str, plan: _Plan) -> str:
    """`TestX` run through the harness: its nonce is printed only if this is the first and
    only run of it in the process, with the harness's flags, and it returned without failing;
    a second run, or changed flags, print the plan's tamper mark instead."""
    key, runs = plan.key, f"harnessRuns{plan.key}_{test}"
    fmt, atomic = f"harnessfmt{key}", f"harnessatomic{key}"
    return (
        f"var {runs} int32\n\n"
        f"func {plan.wrapper(test)}(t *harnesstesting{key}.T) {{\n"
        "\treturned := false\n"
        f"\tfirst := {atomic}.AddInt32(&{runs}, 1) == 1\n"
        "\tt.Cleanup(func() {\n"  # last of all: after every subtest and cleanup
        f"\t\tif !first || !harnessFlagsKept{key}() {{\n"
        f'\t\t\t{fmt}.Println("\\n{plan.tamper}")\n'
        "\t\t} else if returned && !t.Failed() && !t.Skipped() {\n"
        f'\t\t\t{fmt}.Println("\\n{plan.nonces[test]}")\n'
        "\t\t}\n\t})\n"
        f"\t{test}(t)\n"
        "\treturned = true\n}\n"
    )


def _build(
    task: TaskSpec,
    pristine: Pristine,
    place: str,
    code: str,
    limits: TestLimits,
    kind: str,
    package: _Package,
    plan: _Plan,
    guard=None,
) -> tuple[Launched, dict[str, bytes]]:
    wrappers = _wrappers(package, plan)
    files = (*pristine.files, *wrappers.items())
    argv = ("go", "test", "-c", "-o", f"{OUT}/{_BINARY}", f"./{package.folder}")
    run = ForeignRun(
        replace(pristine, files=files),
        place,
        code,
        argv,
        False,
        limits,
        kind,
        guard,
        out_dir=True,
    )
    return launch_foreign(run), wrappers


def _run_binary(
    binary: bytes, tests: list[str], plan: _Plan, limits: TestLimits, kind: str
) -> Launched:
    pattern = "|".join(plan.wrapper(t) for t in tests)
    argv = (
        f"./{_BINARY}",
        f"-test.run=^({pattern})$",
        "-test.v",
        "-test.paniconexit0",
        "-test.count=1",
        f"-test.timeout={max(int(limits.per_test_timeout_s * len(tests)), 1)}s",
    )
    run = ForeignRun(
        Pristine((), ()),
        _BINARY,
        "",
        argv,
        False,
        limits,
        kind,
        tree=((_BINARY, binary),),
        exec_only=(_BINARY,),
        no_proc=True,
    )
    return launch_foreign(run)


@dataclass
class _Seen:
    """One run of the binary, read: each test's outcome, or that it was never reached."""

    cases: dict[str, TestCase] = field(default_factory=dict)
    unreached: list[str] = field(default_factory=list)


def _segments(text: str, plan: _Plan) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each wrapper's output lines (from its `=== RUN` on) and how the binary said it ended."""
    prefix = plan.wrapper("")
    segments: dict[str, list[str]] = {}
    ended: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        run, end = _RUN.match(line), _END.match(line)
        name = run.group(1) if run else end.group(2) if end else ""
        top = name.split("/", 1)[0]
        if run and top.startswith(prefix):
            current = top[len(prefix) :]
        if current is not None:
            segments.setdefault(current, []).append(line)
        if end and top == name and top.startswith(prefix):
            ended[top[len(prefix) :]] = end.group(1)
    return segments, ended


def _message(lines: list[str], fallback: str) -> tuple[str, str]:
    # "\x16" frames test2json's lines: a test's own output may carry it too.
    bare = (s.strip().lstrip("\x16") for s in lines)
    useful = [s for s in bare if s and not s.startswith(_NOISE) and s not in ("PASS", "FAIL")]
    return (useful[0][:500] if useful else fallback), "\n".join(lines)[-4000:]


def _read(got: Launched, tests: list[str], plan: _Plan) -> _Seen:
    text = got.text(got.output)
    segments, ended = _segments(text, plan)
    seen = _Seen()
    for test in tests:
        lines = segments.get(test, [])
        if plan.nonces[test] in text:
            seen.cases[test] = TestCase(test, Outcome.PASSED)
        elif ended.get(test) in ("FAIL", "SKIP"):
            outcome = Outcome.FAILED if ended[test] == "FAIL" else Outcome.SKIPPED
            seen.cases[test] = TestCase(test, outcome, *_message(lines, outcome.value))
        elif ended.get(test) == "PASS":
            why = "the test ended without returning (runtime.Goexit?): its pass is not confirmed"
            seen.cases[test] = TestCase(test, Outcome.ERROR, why, "\n".join(lines)[-4000:])
        elif lines and got.timed_out:
            seen.cases[test] = TestCase(test, Outcome.ERROR, "timeout: the test did not finish")
        elif lines:
            fallback = f"the test binary died during this test (exit status {got.exit_code})"
            seen.cases[test] = TestCase(test, Outcome.FAILED, *_message(lines[1:], fallback))
        else:
            seen.unreached.append(test)
    return seen


def _shown(text: str, plan: _Plan) -> str:
    """The output as a person or a model may see it: no nonce, no wrapper names."""
    for nonce in (*plan.nonces.values(), plan.tamper):
        text = text.replace(nonce, "")
    return text.replace(plan.wrapper(""), "")


@dataclass
class _Outcome:
    cases: dict[str, TestCase] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    timed_out: bool = False
    duration_s: float = 0.0


def _judge_package(
    build: Launched,
    wrappers: dict[str, bytes],
    package: _Package,
    plan: _Plan,
    limits: TestLimits,
    kind: str,
    into: _Outcome,
) -> None:
    into.duration_s += build.duration_s
    tests = list(package.tests)
    binary = build.products.get(_BINARY)
    if build.tree_problems or build.flooded:
        into.problems.append(
            build.flooded or f"the build changed the tree: {build.tree_problems[0]}"
        )
    if binary is None:
        text = _shown(build.text(build.output), plan)
        lines = [s for s in text.splitlines() if s.strip() and not s.startswith("#")]
        why = "timeout: the build did not finish" if build.timed_out else "the tests did not build"
        message = f"{why}: {lines[0].strip()[:400]}" if lines and not build.timed_out else why
        into.outputs.append(text)
        into.cases.update({t: TestCase(t, Outcome.ERROR, message, text[-4000:]) for t in tests})
        into.timed_out |= build.timed_out
        return
    while tests:
        got = _run_binary(binary, tests, plan, limits, kind)
        into.duration_s += got.duration_s
        into.timed_out |= got.timed_out
        into.outputs.append(_shown(got.text(got.output), plan))
        if got.flooded:
            into.problems.append(got.flooded)
        if plan.tamper in got.text(got.output):
            into.problems.append(_RAN_TWICE)
        seen = _read(got, tests, plan)
        into.cases.update(
            {
                t: replace(c, message=_shown(c.message, plan), details=_shown(c.details, plan))
                for t, c in seen.cases.items()
            }
        )
        progress = len(seen.unreached) < len(tests)
        if not seen.unreached or got.exit_code == 0 or got.timed_out or not progress:
            why = (
                f"the test did not run: the test binary exited {got.exit_code} without reaching "
                "it (arguments changed or an exit before the tests?)"
            )
            into.cases.update({t: TestCase(t, Outcome.ERROR, why) for t in seen.unreached})
            return
        tests = seen.unreached


def run_go(
    task: TaskSpec,
    pristine: Pristine,
    place: str,
    code: str,
    expected: Expected,
    limits: TestLimits,
    kind: str,
    guard=None,
) -> TestResult:
    """Build, run and judge a Go task's tests (see the module docstring)."""
    into = _Outcome()
    for package in _packages(pristine):
        plan = _Plan(secrets.token_hex(8), {t: secrets.token_hex(16) for t in package.tests})
        build, wrappers = _build(task, pristine, place, code, limits, kind, package, plan, guard)
        _judge_package(build, wrappers, package, plan, limits, kind, into)
    ids = expected.ids or tuple(into.cases)
    missing = "the test was not found in any test package"
    cases = [into.cases.get(i) or TestCase(i, Outcome.ERROR, missing) for i in ids]
    error = None
    if into.problems:
        error = f"tampered: {into.problems[0]}"
        cases = [TestCase(c.nodeid, Outcome.ERROR, error) for c in cases]
    elif into.timed_out:
        error = "timeout: the test command did not finish in time"
    cases = [replace(c, hidden=c.nodeid in expected.hidden) for c in cases]
    return TestResult(
        cases=tuple(cases),
        output="\n".join(into.outputs),
        error=error,
        timed_out=into.timed_out,
        tampered=bool(into.problems),
        duration_s=into.duration_s,
    )
