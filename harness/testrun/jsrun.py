"""JavaScript and TypeScript behind a value boundary: the candidate in node processes of its
own, the tests and their runner in a launch that holds no candidate code.

A run, per launch (the visible test files, then the hidden ones in a launch of their own):
1. the candidate's folder: the candidate at its place and the support files, never a test
   file; its processes run there under bubblewrap (`node jsnode/candidate.cjs <fds> <path>`),
   each holding two pipes of its own (jsbroker);
2. the stand-in module is written from the module's export names read from its code, in the
   format node will load at that path; the tests' launch starts, and the first candidate
   process right after it (it is needed only once a test process imports the stand-in);
   its answer to `describe` (format, export names) then checks the guess (a wrong one: the
   tests run again on the answer's stand-in). Where the code gives no guess, the candidate
   process starts first and the stand-in waits for its answer;
3. the tests' tree: the tests, the support files and the stand-in at the candidate's place;
   the task's own test command runs there (fspawn) with one more read-only folder bound in:
   the tests' half of the boundary (jsnode/tests.cjs ...) and the broker's named pipes;
4. each test process's first import of the stand-in claims a pair of those pipes; the broker
   joins it to a warm candidate process and relays; values cross by value, the rest as handles
   (jsnode/channel.cjs), with no thread on either side (jsnode/wire.cjs);
5. the verdict is the runner's JUnit report on the record pipe of the tests' launch, scored as
   every foreign run is (fscore): no candidate code ran in that launch to write it.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from harness.results import TestResult
from harness.tasks import TaskSpec
from harness.testrun import launch, privilege
from harness.testrun.expect import Expected
from harness.testrun.fscore import score
from harness.testrun.fspawn import ForeignRun, Launched, _prepare_exec, launch_foreign
from harness.testrun.jsbroker import JsBroker
from harness.testrun.jsexports import guess_exports, module_format
from harness.testrun.limits import TestLimits
from harness.testrun.reports import read_go_json, read_junit
from harness.testrun.scratch import Pristine, build_files, make_run_folder, remove_tree
from harness.testrun.session import _nproc, candidate_files
from harness.testrun.toolenv import command_env, command_rlimits

__all__ = ["run_js_boundary", "uses_js_boundary"]

NODE_FILES = Path(__file__).parent / "jsnode"
_TEST_SIDE = ("tests.cjs", "channel.cjs", "wire.cjs")
_CANDIDATE_SIDE = ("candidate.cjs", "channel.cjs", "wire.cjs", launch.JOIN_PRELOAD.name)
# node options of the test command that decide how a module loads (a TypeScript loader):
# the candidate's node is given them too, so it loads the candidate as the tests would.
_LOADER_FLAGS = ("--import", "--loader", "--experimental-loader", "--require", "-r")
_DESCRIBE_TIMEOUT_S = 30.0


def uses_js_boundary(task: TaskSpec, kind: str) -> bool:
    """Whether a JavaScript/TypeScript task's tests run behind the boundary: a JUnit-reporting
    test command under bubblewrap (without it the candidate's process could read the tests'
    files), unless the task says `isolation: in_process`."""
    return (
        task.language in ("javascript", "typescript")
        and task.results == "junit"
        and kind == "bwrap"
        and task.isolation != "in_process"
    )


def run_js_boundary(
    task: TaskSpec,
    pristine: Pristine,
    place: str,
    code: str,
    expected: Expected,
    argv: Callable[[Pristine], tuple[str, ...]],
    limits: TestLimits,
    kind: str,
    guard=None,
) -> TestResult:
    """Score `code` against the task's tests, behind the boundary; `argv(pristine)` is the
    test command for a part of the tests."""
    hidden = set(pristine.hidden)
    parts = [
        tuple(t for t in pristine.tests if t not in hidden),
        tuple(t for t in pristine.tests if t in hidden),
    ]
    results = []
    for tests in (p for p in parts if p):
        others = set(pristine.tests) - set(tests)
        part = replace(pristine, files=tuple(f for f in pristine.files if f[0] not in others))
        part = replace(part, tests=tests, hidden=tuple(t for t in part.hidden if t in tests))
        is_hidden = tests[0] in hidden
        mine = tuple(i for i in expected.ids or () if (i in expected.hidden) == is_hidden)
        results.append(
            _launch(
                task,
                part,
                place,
                code,
                replace(expected, ids=mine),
                argv(part),
                limits,
                kind,
                guard,
            )
        )
    return _merge(results, expected)


def _merge(results: list[TestResult], expected: Expected) -> TestResult:
    if len(results) == 1:
        return results[0]
    by_id = {c.nodeid: c for r in results for c in r.cases}
    order = expected.ids or tuple(by_id)
    return TestResult(
        cases=tuple(by_id[i] for i in order if i in by_id),
        output="\n".join(r.output for r in results),
        error=next((r.error for r in results if r.error), None),
        timed_out=any(r.timed_out for r in results),
        tampered=any(r.tampered for r in results),
        duration_s=sum(r.duration_s for r in results),
    )


def _launch(
    task: TaskSpec,
    pristine: Pristine,
    place: str,
    code: str,
    expected: Expected,
    argv: tuple[str, ...],
    limits: TestLimits,
    kind: str,
    guard,
) -> TestResult:
    started = time.monotonic()
    uid = privilege.sandbox_uid()
    folder = _run_folder(pristine, place, code, uid, kind)
    ipc = folder / "ipc"
    flags = _loader_flags(task.test_command)
    start = functools.partial(_start_candidate, folder, place, flags, limits, kind, uid, guard)
    files = dict(pristine.files)
    fmt = module_format(place, files)
    guess = guess_exports(code, fmt, task.language)
    broker = None
    try:
        broker = JsBroker(start, str(ipc), wanted=len(pristine.tests))
        timeout = min(_DESCRIBE_TIMEOUT_S, limits.timeout_s)
        if guess is None:  # the stand-in waits for the candidate's own answer
            broker.serve()
            info = broker.describe(timeout)
        else:  # the tests' launch first, the candidate's right after: it is needed later
            info = {"format": fmt, "names": guess}
        got = _run_tests(pristine, place, info, ipc, argv, limits, kind, guard, broker.serve)
        # The candidate had the whole run to answer; a run the clock stopped waits no more.
        described = broker.describe(0.0 if got.timed_out else min(5.0, timeout))
        if _differs(info, described, pristine, files):  # the guess was wrong: run again
            info = described
            got = _run_tests(pristine, place, info, ipc, argv, limits, kind, guard, broker.serve)
    finally:
        if broker is not None:
            broker.close()
        remove_tree(folder)
    whole = got.report and not got.timed_out
    report = read_junit(got.text(got.report).encode()) if whole else read_go_json("")
    report.text = report.text or got.text(got.output)[-4000:]
    tests = tuple(r for r, _ in pristine.files if r.startswith(pristine.tests))
    result = score(expected, report, got, tests)
    shown = _candidate_output(broker.info or {}, broker.output, got)
    return replace(result, output=result.output + shown, duration_s=time.monotonic() - started)


def _run_tests(
    pristine: Pristine,
    place: str,
    info: dict,
    ipc: Path,
    argv: tuple[str, ...],
    limits: TestLimits,
    kind: str,
    guard,
    started: Callable[[], None],
) -> Launched:
    """The tests' launch: the task's command over the tests' tree, the stand-in at the
    candidate's place, the boundary's folder bound in; `started` once it started."""
    standin = stand_in(info, str(ipc / "jsnode" / "tests.cjs"), str(ipc))
    run = ForeignRun(
        pristine,
        place,
        standin,
        argv,
        True,
        limits,
        kind,
        guard,
        binds=(str(ipc),),
        started=started,
    )
    return launch_foreign(run)


def _differs(guess: dict, described: dict, pristine: Pristine, files: dict[str, bytes]) -> bool:
    """Whether the stand-in written from the guess is not the one the candidate's answer
    makes: another format, or other names where a test file reads them (an ES module)."""
    if not described.get("format") or described.get("error"):
        return False  # it did not load: the run already shows that
    if guess["format"] != described["format"]:
        return True
    esm_tests = any(module_format(t, files) == "esm" for t in pristine.tests)
    read = described["format"] == "esm" or esm_tests
    return read and set(guess["names"] or ()) != set(described["names"])


def _candidate_output(info: dict, output: bytearray, got: Launched) -> str:
    """The candidate processes' own output and load error: shown after the tests' output,
    never read by the scoring (which is done by then)."""
    text = output.decode("utf-8", errors="replace")
    if info.get("error"):
        text = f"the candidate module did not load: {info['error']}\n{text}"
    return f"\n--- the candidate's processes ---\n{text[-100_000:]}" if text.strip() else ""


def stand_in(info: dict, client: str, folder: str) -> str:
    """The module the tests import at the candidate's place: no candidate code, only a
    connection to a candidate process and its exports as the boundary carries them."""
    head = "// The candidate, reached across the boundary (written by the harness).\n"
    names = [n for n in info.get("names", []) if isinstance(n, str)]
    if info.get("format") == "esm":
        lines = [head, f"import {{ connect }} from {json.dumps(client)};"]
        lines.append(f"const m = connect({json.dumps(folder)});")
        for i, name in enumerate(names):
            alias = name if name.isidentifier() or name == "default" else json.dumps(name)
            lines.append(f"const _{i} = m[{json.dumps(name)}];\nexport {{ _{i} as {alias} }};")
        return "\n".join(lines) + "\n"
    exported = ", ".join(n for n in names if n.isidentifier() and n.isascii())
    return (
        f"{head}'use strict';\nconst connect = require({json.dumps(client)}).connect;\n"
        f"module.exports = connect({json.dumps(folder)});\n"
        # node reads a CommonJS module's export names for `import { x }` from this line
        f"0 && (module.exports = {{ {exported} }});\n"
    )


def _loader_flags(command: tuple[str, ...]) -> tuple[str, ...]:
    if not command or os.path.basename(command[0]) != "node":
        return ()
    found: list[str] = []
    items = list(command[1:])
    for at, item in enumerate(items):
        if item in _LOADER_FLAGS and at + 1 < len(items):
            found += [item, items[at + 1]]
        elif item.startswith(tuple(f"{f}=" for f in _LOADER_FLAGS)):
            found.append(item)
    return tuple(found)


def _copy_node_files(folder: Path, names: tuple[str, ...]) -> None:
    target = folder / "jsnode"
    target.mkdir(mode=0o755)
    for name in names:
        shutil.copyfile(NODE_FILES / name, target / name)
        os.chmod(target / name, 0o444)
    os.chmod(target, 0o555)


def _run_folder(pristine: Pristine, place: str, code: str, uid: int | None, kind: str) -> Path:
    """The launch's run folder: `root` (the candidate and the support files, never a test
    file) and `boot` (the bootstrap and the candidate's half of the boundary), the two bound
    into the candidate's sandbox; `ipc` (the tests' half and the broker's named pipes), bound
    into the tests' launch. Neither sandbox sees the other's part."""
    folder = make_run_folder()
    files = {**dict(candidate_files(pristine)), place: code.encode()}
    build_files(folder / "root", files)
    # exec.py and boot.py where a launch needs them (nothing of the pytest runner's)
    _prepare_exec(folder, uid, bootstrap=not launch.bootstrapless(kind))
    boot = folder / "boot"
    boot.mkdir(mode=0o755, exist_ok=True)
    os.chmod(boot, 0o755)
    _copy_node_files(boot, _CANDIDATE_SIDE)
    os.chmod(boot, 0o555)
    ipc = folder / "ipc"
    ipc.mkdir(mode=0o711)
    _copy_node_files(ipc, _TEST_SIDE)
    return folder


def _start_candidate(
    folder: Path,
    place: str,
    flags: tuple[str, ...],
    limits: TestLimits,
    kind: str,
    uid: int | None,
    guard,
    fds: tuple[int, int, int],
) -> launch.Child:
    """One candidate process holding the pipe ends `fds` (the broker's `start`)."""
    root = folder / "root"
    plan = launch.make_plan(
        kind, folder, root, limits.tmp_mb, limits.max_procs, uid, limits.memory_mb, command=True
    )
    who = plan.uid if plan.uid is not None else plan.spawn_user
    script = str(folder / "boot" / "jsnode" / "candidate.cjs")
    command = ("node", *flags, script, ",".join(map(str, fds)), str(root / place))
    env = command_env("/tmp", plan.marker)
    rlimits = command_rlimits(limits, _nproc(os.getuid() if who is None else who, limits.max_procs))
    if plan.direct:  # the lock-down with no Python bootstrap (launch.command_argv)
        # node waits for its cgroups in its first preload, before candidate.cjs and loaders
        preload = str(folder / "boot" / "jsnode" / launch.JOIN_PRELOAD.name)
        direct = launch.command_argv(plan, plan.argv, command, rlimits, preload)
        if guard is not None:
            guard((*direct[0], *direct[1]))
        return launch.spawn_command(plan, direct, root, env, extra_fds=fds)
    # -S: the bootstrap imports the standard library only; no site-packages, no .pth files.
    plan = replace(plan, argv=(*plan.argv[:-1], "-S", str(folder / "boot" / "exec.py")))
    config = {
        "argv": list(command),
        "env": [list(pair) for pair in env],
        "cwd": str(root),
        "report": False,
        "rlimits": rlimits,
    }
    if guard is not None:
        guard(plan.argv)
    return launch.spawn(plan, root, config, extra_fds=fds)
