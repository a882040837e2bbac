"""One sandboxed test run: build the scratch tree, launch (and relaunch past a hung or crashed
test), judge the records, verify the tree, and turn it all into a TestResult."""

from __future__ import annotations

import atexit
import functools
import json
import os
import secrets
import shutil
import stat
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.results import Outcome, TestCase
from harness.testrun import launch, litter, privilege, texts
from harness.testrun.broker import Broker
from harness.testrun.bytecode import write_pyc
from harness.testrun.channel import Watch, watch
from harness.testrun.imports import imported_modules
from harness.testrun.limits import TestLimits
from harness.testrun.score import Settlement, Verdict, judge
from harness.testrun.scratch import (
    RUN_MARKER,
    Pristine,
    build_tree,
    make_run_folder,
    remove_tree,
    verify_tree,
)

__all__ = ["Run", "launch_all"]

MAX_LAUNCHES = 8
_BOUNDARY_FILES = (
    *("__init__.py", "codec.py", "wire.py", "remote.py", "candidate.py", "proxy.py"),
    "script.py",
    "observe.py",
)
OBSERVED = "observed.jsonl"  # in the shared folder: the tests' calls (boundary/observe.py)
MAX_OBSERVED = 4 << 20
# What the tests' tree holds at the candidate's place in boundary mode: no candidate code.
PROXY_STUB = (
    '"""The candidate, reached across the boundary (written by the harness)."""\n'
    "import sys\n\n"
    'if __name__ == "__main__":  # run as a script by a test: the candidate runs it\n'
    "    import os\n\n"
    '    sys.path.insert(0, os.environ.get("HARNESS_BOUNDARY_LIB", ""))\n'
    "    from harness_boundary import script\n\n"
    "    sys.exit(script.run(__file__, sys.argv[1:]))\n"
    'sys.modules[__name__] = sys.modules["harness_boundary.proxy"].module(__name__)\n'
)
_INI_NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_CHILD_FILES = (
    "boot.py",
    "classify.py",
    "stack.py",
    "files.py",
    "shield.py",
    "guard.py",
    "semantics.py",
    "texts.py",
    "recorder.py",
    "vault.py",
    "exec.py",
)


@dataclass(frozen=True)
class Run:
    """Everything fixed for one run_tests call."""

    pristine: Pristine
    candidate_rel: str
    code: str
    limits: TestLimits
    kind: str  # "bwrap" | "rlimits"
    expected: frozenset[str] = frozenset()  # the pristine ids
    open_files: tuple[str, ...] = ()  # test files the pristine collection could not read
    collect_only: bool = False
    # The operator's command policy: sees every argv before it is started; raises to refuse.
    command_guard: Callable[[Sequence[str]], None] | None = None
    # isolation: boundary — the candidate runs in processes of its own (see boundary/).
    boundary: bool = False
    # Boundary mode: log the tests' calls into the candidate's functions (differential.py);
    # never for hidden test files, whose inputs must not reach a prompt.
    observe: bool = False


def _prepare(run_dir: Path, uid: int | None) -> None:
    os.chmod(run_dir, 0o711)
    _boot_files(run_dir / "boot")
    tmp = run_dir / "tmp"
    tmp.mkdir(mode=0o700)
    if uid is not None:
        os.chown(tmp, uid, uid)


def _boot_files(boot: Path) -> None:
    """The bootstrap, the boundary's sandbox half (imported there as a package), their
    compiled bytecode and an empty pytest.ini, read-only: hard links to this process's one
    copy of them (a link is one call; a copy and a compile per file cost ~30 ms a run on a
    slow disk), or copies where a link cannot be made."""
    template = _boot_template()
    for attempt in range(2):
        try:
            _link_tree(template, boot)
            return
        except OSError:
            shutil.rmtree(boot, ignore_errors=True)
            if attempt == 0:  # the template was swept away under us: make it again
                _boot_template.cache_clear()
                template = _boot_template()
    _copy_boot(boot)


def _link_tree(template: Path, boot: Path) -> None:
    for folder, dirs, files in os.walk(template):
        rel = Path(folder).relative_to(template)
        (boot / rel).mkdir(mode=0o755)
        for name in files:
            if name != RUN_MARKER:
                os.link(Path(folder) / name, boot / rel / name)
        dirs.sort()
    for folder, _dirs, _files in sorted(os.walk(boot), reverse=True):
        os.chmod(folder, 0o555)


@functools.cache
def _boot_template() -> Path:
    """This process's one read-only copy of the boot files (a marked run folder, so a
    harness killed outright leaves nothing the stale sweep keeps; removed at exit)."""
    folder = make_run_folder()
    _copy_boot(folder / "boot")
    owner = os.getpid()
    atexit.register(lambda: os.getpid() == owner and remove_tree(folder))
    return folder / "boot"


def _copy_boot(boot: Path) -> None:
    boot.mkdir(mode=0o755)
    here = Path(__file__).parent / "child"  # never imported: copied into the sandbox
    for name in _CHILD_FILES:
        if (here / name).exists():
            shutil.copyfile(here / name, boot / name)
            os.chmod(boot / name, 0o444)
            if name != "boot.py":  # the script itself is always compiled from its text
                write_pyc(boot / name)
    package = boot / "harness_boundary"
    package.mkdir(mode=0o755)
    for name in _BOUNDARY_FILES:  # the boundary's sandbox half, imported there as a package
        shutil.copyfile(Path(__file__).parent / "boundary" / name, package / name)
        os.chmod(package / name, 0o444)
        write_pyc(package / name)
    (boot / "pytest.ini").write_text("[pytest]\n")
    os.chmod(boot / "pytest.ini", 0o444)
    for folder, _dirs, _files in sorted(os.walk(boot), reverse=True):
        os.chmod(folder, 0o555)


def _pytest_args(run: Run, run_dir: Path, root: Path) -> list[str]:
    names = dict(run.pristine.files)
    ini = next((root / n for n in _INI_NAMES if n in names), run_dir / "boot" / "pytest.ini")
    args = [*run.pristine.tests, "-c", str(ini), "--rootdir", str(root), "--confcutdir", str(root)]
    args += ["-p", "no:cacheprovider", "--continue-on-collection-errors", "--color=no"]
    args += ["--collect-only", "-q"] if run.collect_only else ["-q", "--tb=short", "--no-header"]
    return args


def _nproc(uid: int, extra: int) -> int:
    """RLIMIT_NPROC counts every process of the uid, so allow the ones already running."""
    count = 0
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            count += entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid
        except OSError:
            continue
    return count + extra


def _config(
    run: Run, plan: launch.Plan, root: Path, args: list[str], only: list[str] | None
) -> dict:
    lim = run.limits
    cand_dir = str((root / run.candidate_rel).parent)
    return {
        "nonce": secrets.token_hex(16),
        "only": only,
        "args": args,
        "root": str(root),
        "candidate": str(root / run.candidate_rel),
        # The tree's root first, as `python -m pytest` run there puts it: a package at the
        # root wins over a module of its name in the candidate's folder (wcwidth/wcwidth.py).
        "paths": list(dict.fromkeys([str(root), cand_dir])),
        "library": launch.library_dirs(),
        "test_code": [str(root / rel) for rel, _ in run.pristine.files if rel.endswith(".py")],
        "preload": imported_modules(run.pristine.files),
        "protected": [*(str(root / rel) for rel, _ in run.pristine.files), *run.pristine.origins],
        # In process: the support files the candidate's own process would hold behind the
        # boundary, which it may read (never write) here too.
        "readable": [str(root / rel) for rel, _ in candidate_files(run.pristine)],
        "per_test_timeout": 0 if run.collect_only else lim.per_test_timeout_s,
        "rlimits": _rlimits(lim, plan),
    }


def _rlimits(lim: TestLimits, plan: launch.Plan) -> dict[str, int]:
    uid = plan.uid if plan.uid is not None else plan.spawn_user
    return {
        "cpu": int(lim.cpu_s),
        "as": lim.memory_mb << 20,
        "fsize": lim.file_size_mb << 20,
        "nproc": _nproc(os.getuid() if uid is None else uid, lim.max_procs),
        "core": 0,
    }


def candidate_files(pristine: Pristine) -> tuple[tuple[str, bytes], ...]:
    """What the candidate's own sandbox holds besides the candidate: the support files, never
    a test file (visible or hidden) or a conftest.py (test machinery)."""
    tests, support = set(pristine.tests), set(pristine.support)
    return tuple(
        (rel, data)
        for rel, data in pristine.files
        if rel in support and rel not in tests and PurePosixPath(rel).name != "conftest.py"
    )


def support_modules(pristine: Pristine, candidate_rel: str) -> list[str]:
    """The module names the support files import as on either side (from the tree's root or
    from the candidate's folder): classes of these modules are matched by name."""
    names: list[str] = []
    folders = (PurePosixPath(), PurePosixPath(candidate_rel).parent)
    for rel, _ in candidate_files(pristine):
        path = PurePosixPath(rel)
        if path.suffix != ".py":
            continue
        for folder in folders:
            if not path.is_relative_to(folder):
                continue
            parts = path.with_suffix("").relative_to(folder).parts
            parts = parts[:-1] if parts and parts[-1] == "__init__" else parts
            if parts and all(p.isidentifier() for p in parts):
                names.append(".".join(parts))
    return list(dict.fromkeys(names))


def launch_all(run: Run) -> Settlement:
    """Run the tests; after a launch dies mid-test, relaunch for the tests it never reached."""
    run_dir = make_run_folder()
    tally = Settlement()
    uid = privilege.sandbox_uid()  # one per run: relaunches share its tmp folder
    cand_dir = _CandidateFolder(run, uid) if run.boundary else None
    try:
        root = run_dir / "root"
        code = PROXY_STUB if run.boundary else run.code
        files = {**dict(run.pristine.files), run.candidate_rel: code.encode()}
        build_tree(root, run.pristine, run.candidate_rel, code)
        _prepare(run_dir, uid)
        if run.boundary:
            _shared_folder(run_dir, uid)
        _launch_loop(run, run_dir, root, tally, uid, cand_dir)
        if cand_dir is not None and cand_dir.error is not None:
            raise cand_dir.error
        if cand_dir is not None and run.observe:
            tally.observed.extend(_observed(run_dir / "shared" / OBSERVED))
        try:
            problems = verify_tree(root, files)
        except (OSError, RecursionError) as exc:  # a tree mangled beyond walking
            problems = [f"it could not be checked ({type(exc).__name__})"]
        if problems:
            tally.tamper.append(f"the scratch tree changed during the run: {problems[0]}")
    finally:
        remove_tree(run_dir)
        made = cand_dir.made() if cand_dir is not None else None
        if made is not None:
            remove_tree(made)
        litter.after_run(run.kind, uid)
    texts.relativize(tally, root)
    return tally


def _observed(path: Path) -> list[dict]:
    """The calls the tests made (observe.py), as far as they parse: inputs only, replayed by
    the harness itself, so a line the candidate forged only adds a call to check."""
    try:  # the shared folder is the candidate's too: never through a link it planted
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            return []
        data = source.read(MAX_OBSERVED)
    found = []
    for line in data.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if type(entry) is dict:  # each field is checked where it is read (differential.py)
            found.append(entry)
    return found


def _shared_folder(run_dir: Path, uid: int | None) -> Path:
    """Boundary mode: the folder under which pytest makes the tests' temporary folders
    (`tmp_path`), mounted writable at the same path into the candidate's sandbox too, so a
    path the tests pass crosses as a value and means the same folder on both sides."""
    shared = run_dir / "shared"
    shared.mkdir(mode=0o700, exist_ok=True)
    if uid is not None:
        os.chown(shared, uid, uid)
    return shared


class _CandidateFolder:
    """Boundary mode: the candidate's run folder, made by the first candidate start (on the
    broker's thread, while the test process starts) and shared by every later one."""

    def __init__(self, run: Run, uid: int | None) -> None:
        self.run, self.uid = run, uid
        self.path: Path | None = None
        self.error: Exception | None = None
        self.lock = threading.Lock()

    def get(self) -> Path:
        with self.lock:
            if self.path is None:
                try:
                    self.path = _candidate_folder(self.run, self.uid)
                except Exception as exc:  # a full disk: the harness's failure, raised by
                    self.error = exc  # launch_all, never scored as the candidate's
                    raise
            return self.path

    def made(self) -> Path | None:
        with self.lock:  # (after a start still making it)
            return self.path


def _candidate_folder(run: Run, uid: int | None) -> Path:
    """Boundary mode: the candidate's own run folder, its tree the candidate and the support
    files only. Its sandbox mounts this folder's tree, never the tests' one."""
    folder = make_run_folder()
    only_support = Pristine(candidate_files(run.pristine), ())
    build_tree(folder / "root", only_support, run.candidate_rel, run.code)
    _prepare(folder, uid)
    return folder


def _start_in(
    run: Run, lazy: _CandidateFolder, uid: int | None, shared: Path, sock: int
) -> launch.Child:
    """The broker's `start`: a candidate process in the run's candidate folder (made by the
    first start)."""
    return _start_candidate(run, lazy.get(), uid, shared, sock)


def _start_candidate(
    run: Run, folder: Path, uid: int | None, shared: Path, sock: int
) -> launch.Child:
    """One candidate process holding the socket `sock`."""
    lim, root = run.limits, folder / "root"
    plan = launch.make_plan(run.kind, folder, root, lim.tmp_mb, lim.max_procs, uid, shared=shared)
    if run.command_guard is not None:
        run.command_guard(plan.argv)
    config = {
        "role": "candidate",
        "socket": sock,
        "support": support_modules(run.pristine, run.candidate_rel),
        "paths": list(dict.fromkeys([str(root), str((root / run.candidate_rel).parent)])),
        "rlimits": _rlimits(lim, plan),
    }
    return launch.spawn(plan, root, config, extra_fds=(sock,))


def _launch_loop(
    run: Run,
    run_dir: Path,
    root: Path,
    tally: Settlement,
    uid: int | None,
    cand_dir: _CandidateFolder | None,
) -> None:
    lim = run.limits
    deadline = time.monotonic() + lim.timeout_s
    args = _pytest_args(run, run_dir, root)
    shared = run_dir / "shared" if cand_dir is not None else None
    if shared is not None:
        args.append(f"--basetemp={shared / 'pytest'}")
    only: list[str] | None = None
    for n in range(MAX_LAUNCHES):
        plan = launch.make_plan(
            run.kind, run_dir, root, lim.tmp_mb, lim.max_procs, uid, shared=shared
        )
        config = _config(run, plan, root, args, only)
        if run.command_guard is not None:
            run.command_guard(plan.argv)
        seen = _launch_once(run, plan, root, config, deadline, cand_dir, uid)
        allowed = frozenset(only) if only is not None else _allowed(run, seen)
        verdict = judge(seen.records, config["nonce"], allowed)
        only = _absorb(n, seen, verdict, tally)
        if only is None:
            return
        if time.monotonic() >= deadline:
            tally.timed_out, tally.stop_reason = True, f"the run exceeded {lim.timeout_s:g}s"
            return


def _launch_once(
    run: Run,
    plan: launch.Plan,
    root: Path,
    config: dict,
    deadline: float,
    cand_dir: _CandidateFolder | None,
    uid: int | None,
) -> Watch:
    """One pytest process; in boundary mode with a broker starting its candidate processes."""
    lim = run.limits
    grace = max(0.5, lim.per_test_timeout_s / 4)  # time for the in-process alarm first
    if cand_dir is None:
        child = launch.spawn(plan, root, config)
        return watch(child, deadline, lim.per_test_timeout_s + grace, lim.collect_timeout_s)
    shared = root.parent / "shared"
    broker = Broker(functools.partial(_start_in, run, cand_dir, uid, shared))
    try:
        assert broker.test_fd is not None
        support = support_modules(run.pristine, run.candidate_rel)
        config = {**config, "role": "tests", "broker": broker.test_fd, "support": support}
        config["shared"] = str(shared)
        if run.observe:
            config["observed"] = str(shared / OBSERVED)
        child = launch.spawn(plan, root, config, extra_fds=(broker.test_fd,))
        broker.handed_over()
        return watch(child, deadline, lim.per_test_timeout_s + grace, lim.collect_timeout_s)
    finally:
        broker.close()


def _allowed(run: Run, seen: Watch) -> frozenset[str]:
    """First launch: the pristine ids, plus what was collected from files the pristine
    collection could not read (or everything, when this is the pristine collection)."""
    prefixes = tuple(f"{f}::" for f in run.open_files)
    found = _first_selection(seen)
    if run.collect_only or run.boundary:
        # Behind the boundary the test process runs no candidate code, so what it collected
        # is the tests' own doing: a parametrization over the candidate's data (a module's
        # table) differs from the stub's honestly.
        return run.expected | frozenset(found)
    return run.expected | {i for i in found if prefixes and i.startswith(prefixes)}


def _first_selection(seen: Watch) -> list[str]:
    for rec in seen.records:
        if rec and rec.get("k") == "collected" and isinstance(rec.get("selected"), list):
            return [str(i) for i in rec["selected"]]
    return []


def _absorb(n: int, seen: Watch, verdict: Verdict, tally: Settlement) -> list[str] | None:
    """Fold one launch into the tally; return the ids to relaunch for, or None to stop."""
    before = len(tally.cases)
    tally.outputs.append(texts.output_text(n, seen))
    tally.tamper.extend(verdict.tamper)
    tally.collect_errors.extend(verdict.collect_errors)
    if n == 0:
        tally.collected = _first_selection(seen)  # in collection order: the run order
        tally.first_tail = texts.output_tail(seen)
    tally.cases.update(verdict.settled)
    tally.collected_ok = tally.collected_ok or verdict.collected
    stuck = verdict.in_flight or seen.hung_test
    if stuck and stuck not in tally.cases:
        tally.cases[stuck] = TestCase(stuck, Outcome.ERROR, *texts.stuck_reason(seen, verdict))
    if seen.ended_by == "flood":
        tally.tamper.append("the record channel was flooded past its byte or record cap")
        return None
    if seen.ended_by in ("deadline", "collect_timeout"):
        tally.timed_out = True
        tally.stop_reason = texts.stop_text(seen.ended_by)
        return None
    if tally.tamper or not verdict.collected:
        return None
    pending = [i for i in _first_selection(seen) if i not in tally.cases]
    if not pending or len(tally.cases) == before:
        return None
    return pending
