"""Launch one foreign test command in the sandbox and collect what it wrote, within the clock.

The same sandbox as pytest's (launch.make_plan: bubblewrap or the rlimits fallback, the
throwaway uid, the pids cgroup, the process-tree sweep); only the bootstrap differs: exec.py
locks the process down as boot.py does and then execs the command. The report pipe is the
record pipe the sandbox already has: an unguessable fd handed to the command alone.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.testrun import launch, litter, privilege
from harness.testrun.limits import TestLimits
from harness.testrun.reap import kill_tree
from harness.testrun.reports import MAX_REPORT_BYTES
from harness.testrun.scratch import (
    Pristine,
    build_files,
    make_run_folder,
    remove_tree,
    verify_tree,
)
from harness.testrun.session import _nproc
from harness.testrun.toolenv import command_env, command_rlimits

__all__ = ["OUT", "ForeignRun", "Launched", "launch_foreign"]

MAX_OUTPUT_BYTES = 32 << 20  # stdout+stderr kept whole (go-json events live there); past it: flood
MAX_PRODUCT_BYTES = 512 << 20  # what a build launch may leave in its out folder (a test binary)
OUT = "{out}"  # in argv: the launch's writable out folder (a build's products)
_CHUNK = 65536
_CHILD = Path(__file__).parent / "child"
_EXEC_FILES = ("exec.py", "boot.py")  # exec.py locks the process down with boot.py's steps


@dataclass(frozen=True)
class ForeignRun:
    """Everything fixed for one foreign run: the tree, the command, how the report arrives."""

    pristine: Pristine
    candidate_rel: str
    code: str
    argv: tuple[str, ...]  # {tests} and {output} expanded; {results} left for the bootstrap
    report_pipe: bool  # the command writes its report to {results}
    limits: TestLimits
    kind: str  # "bwrap" | "rlimits"
    command_guard: Callable[[Sequence[str]], None] | None = None
    # The whole tree instead of pristine + candidate (a run of a built binary: nothing else).
    tree: tuple[tuple[str, bytes], ...] | None = None
    exec_only: tuple[str, ...] = ()  # files of the tree made 0111: run, never read
    out_dir: bool = False  # a writable folder, {out} in argv, whose files come back
    no_proc: bool = False  # no /proc in the sandbox (bubblewrap): no reading its own memory
    binds: tuple[str, ...] = ()  # folders bound read-only into the sandbox (bubblewrap)
    # Called once the command's process started, before its output is read (the JavaScript
    # boundary starts its candidate's process then, beside the tests' start-up); if it
    # raises, the launch is killed and the error goes on.
    started: Callable[[], None] | None = None

    def files(self) -> dict[str, bytes]:
        if self.tree is not None:
            return dict(self.tree)
        return {**dict(self.pristine.files), self.candidate_rel: self.code.encode()}


@dataclass
class Launched:
    """What the launch produced, raw."""

    output: bytearray = field(default_factory=bytearray)
    report: bytearray = field(default_factory=bytearray)
    exit_code: int | None = None
    timed_out: bool = False
    flooded: str = ""
    tree_problems: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    root: str = ""  # the scratch root's path, taken out of what is shown
    products: dict[str, bytes] = field(default_factory=dict)  # the out folder's files

    def text(self, data: bytearray) -> str:
        text = data.decode("utf-8", errors="replace")
        return text.replace(f"{self.root}/", "") if self.root else text


def launch_foreign(run: ForeignRun) -> Launched:
    """Build the scratch tree, run the command once, verify the tree, clean up."""
    started = time.monotonic()
    run_dir = make_run_folder()
    uid = privilege.sandbox_uid()
    got = Launched()
    try:
        root = run_dir / "root"
        got.root = str(root)
        build_files(root, run.files())
        for rel in run.exec_only:
            os.chmod(root / rel, 0o111)
        direct = launch.bootstrapless(run.kind)
        # a node command under /proc waits for its cgroups in node (launch.command_argv)
        preload = direct and not run.no_proc and launch.runs_node(run.argv)
        _prepare_exec(run_dir, uid, bootstrap=not direct, preload=preload)
        if run.out_dir:
            (run_dir / "out").mkdir(mode=0o700)
            if uid is not None:
                os.chown(run_dir / "out", uid, uid)
        _run_once(run, run_dir, root, uid, got)
        try:
            got.tree_problems = verify_tree(root, run.files())
        except (OSError, RecursionError) as exc:
            got.tree_problems = [f"it could not be checked ({type(exc).__name__})"]
        if run.out_dir:
            got.products = _products(run_dir / "out")
    finally:
        remove_tree(run_dir)
        litter.after_run(run.kind, uid)
    got.duration_s = time.monotonic() - started
    return got


def _prepare_exec(
    run_dir: Path, uid: int | None, bootstrap: bool = True, preload: bool = False
) -> None:
    """The launch's tmp folder and, where the launch starts the Python bootstrap (not
    `launch.bootstrapless`), its bootstrap folder: exec.py and the boot.py whose steps it
    borrows, nothing of the pytest runner's files (a foreign command never loads them);
    with `preload`, that folder holds the join's preload instead (launch.place_preload)."""
    os.chmod(run_dir, 0o711)
    tmp = run_dir / "tmp"
    tmp.mkdir(mode=0o700)
    if uid is not None:
        os.chown(tmp, uid, uid)
    if not bootstrap and not preload:
        return
    boot = run_dir / "boot"
    boot.mkdir(mode=0o755)
    if not bootstrap:
        launch.place_preload(boot)
        os.chmod(boot, 0o555)
        return
    for name in _EXEC_FILES:
        shutil.copyfile(_CHILD / name, boot / name)
        os.chmod(boot / name, 0o444)
    os.chmod(boot, 0o555)


def _products(out: Path) -> dict[str, bytes]:
    """The regular files a build left in its out folder (never a link), within the cap."""
    found: dict[str, bytes] = {}
    total = 0
    for path in sorted(out.iterdir()):
        st = os.lstat(path)
        total += st.st_size
        if stat.S_ISREG(st.st_mode) and total <= MAX_PRODUCT_BYTES:
            found[path.name] = path.read_bytes()
    return found


def _sandbox_argv(run: ForeignRun, argv: tuple[str, ...], run_dir: Path) -> tuple[str, ...]:
    """bubblewrap's argv with the out folder bound writable and, if asked, /proc left out."""
    items = list(argv)
    if run.kind != "bwrap":
        return argv
    if run.no_proc:
        at = items.index("--proc")
        del items[at : at + 2]
    if run.out_dir:
        out = str(run_dir / "out")
        at = items.index("--chdir")
        items[at:at] = ["--bind", out, out]
    for path in run.binds:
        at = items.index("--chdir")
        items[at:at] = [*launch.parent_dirs(path), "--ro-bind", path, path]
    return tuple(items)


def _run_once(run: ForeignRun, run_dir: Path, root: Path, uid: int | None, got: Launched) -> None:
    lim = run.limits
    plan = launch.make_plan(
        run.kind, run_dir, root, lim.tmp_mb, lim.max_procs, uid, lim.memory_mb, command=True
    )
    home = "/tmp" if run.kind == "bwrap" else str(run_dir / "tmp")
    who = plan.uid if plan.uid is not None else plan.spawn_user
    argv = tuple(a.replace(OUT, str(run_dir / "out")) for a in run.argv)
    env = command_env(home, plan.marker)
    rlimits = command_rlimits(lim, _nproc(os.getuid() if who is None else who, lim.max_procs))
    owner = who if run.report_pipe else None
    if plan.direct:  # bubblewrap: the command locked down with no Python bootstrap
        preload = run_dir / "boot" / launch.JOIN_PRELOAD.name
        direct = launch.command_argv(
            plan,
            _sandbox_argv(run, plan.argv, run_dir),
            argv,
            rlimits,
            str(preload) if preload.is_file() else None,
        )
        if run.command_guard is not None:
            run.command_guard(run.argv)
            run.command_guard((*direct[0], *direct[1]))
        child = launch.spawn_command(plan, direct, root, env, run.report_pipe, owner)
        _pump(child, time.monotonic() + lim.timeout_s, got, run.started)
        return
    # -S: exec.py imports the standard library only (no site-packages, no .pth files run).
    exec_py = str(run_dir / "boot" / "exec.py")
    plan = replace(plan, argv=_sandbox_argv(run, (*plan.argv[:-1], "-S", exec_py), run_dir))
    config = {
        "argv": list(argv),
        "env": [list(pair) for pair in env],
        "cwd": str(root),
        "report": run.report_pipe,
        "rlimits": rlimits,
    }
    if run.command_guard is not None:
        run.command_guard(run.argv)
        run.command_guard(plan.argv)
    child = launch.spawn(plan, root, config, pipe_owner=owner)
    _pump(child, time.monotonic() + lim.timeout_s, got, run.started)


def _exited(child: launch.Child) -> bool:
    try:
        return os.waitid(os.P_PID, child.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _take(fd: int, sink: bytearray, cap: int, got: Launched, what: str) -> bool:
    """Read what is there; False at end of file. Past the cap the data is dropped, flagged."""
    try:
        data = os.read(fd, _CHUNK)
    except BlockingIOError:
        return True
    if not data:
        return False
    if len(sink) + len(data) > cap:
        got.flooded = got.flooded or f"the {what} went past {cap >> 20} MiB"
    else:
        sink += data
    return True


def _pump(
    child: launch.Child, deadline: float, got: Launched, started: Callable[[], None] | None = None
) -> None:
    """Read output and report until the command exits or the clock runs out; then kill the
    whole tree (however it detached) and drain the pipes. `started` is called first."""
    sel = selectors.DefaultSelector()
    sinks = {
        child.output_fd: (got.output, MAX_OUTPUT_BYTES, "output"),
        child.records_fd: (got.report, MAX_REPORT_BYTES + 1, "report"),
    }
    for fd in sinks:
        sel.register(fd, selectors.EVENT_READ)
    try:
        if started is not None:
            try:
                started()
            except BaseException:
                kill_tree(child)
                raise
        while not _exited(child) and not got.flooded:
            if time.monotonic() >= deadline:
                got.timed_out = True
                break
            _select(sel, sinks, got)
        kill_tree(child)
        got.exit_code = child.proc.poll()
        stop = time.monotonic() + 2.0
        while sel.get_map() and time.monotonic() < stop:
            _select(sel, sinks, got)
    finally:
        sel.close()
        for fd in sinks:
            with contextlib.suppress(OSError):
                os.close(fd)


def _select(sel: selectors.BaseSelector, sinks: dict, got: Launched) -> None:
    for key, _ in sel.select(timeout=0.05):
        if not _take(key.fd, *sinks[key.fd][:2], got, sinks[key.fd][2]):
            sel.unregister(key.fd)
