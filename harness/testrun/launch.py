"""Build the command for one sandboxed pytest process (bubblewrap or the fallback) and start it."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.testrun import cgroup, privilege
from harness.testrun.scratch import SandboxError

__all__ = [
    "Child",
    "Plan",
    "base_env",
    "bwrap_works",
    "command_argv",
    "fallback_caps_processes",
    "make_plan",
    "parent_dirs",
    "spawn",
    "spawn_command",
]

MARKER_VAR = "HARNESS_SANDBOX_RUN"
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/alternatives",
)


@dataclass(frozen=True)
class Plan:
    """How to start one sandboxed process: argv, environment, user, and the in-sandbox paths."""

    kind: str  # "bwrap" or "rlimits"
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    uid: int | None  # the uid the bootstrap drops to, None to stay
    spawn_user: int | None  # the uid the process is started as (fallback privilege drop)
    marker: str
    cgroup: Path | None = None  # a pids cgroup the bootstrap joins first (root fallback)
    interpreter: privilege.Interpreter | None = None  # reached through fds (fallback drop)
    # A command plan (make_plan's `command`): argv is bubblewrap's alone, the command comes
    # after the lock-down (command_argv), and no Python starts.
    direct: bool = False


@dataclass
class Child:
    """A running sandbox: its process, the record pipe and the output pipe (parent ends)."""

    proc: subprocess.Popen[bytes]
    records_fd: int
    output_fd: int
    marker: str
    cgroup: Path | None = None


def library_dirs() -> list[str]:
    """The interpreter's own code (stdlib and site-packages) as real paths: what the sandbox
    trusts, whichever road (a bind mount, /proc/self/fd) it reaches them by."""
    paths = sysconfig.get_paths()
    keys = ("stdlib", "platstdlib", "purelib", "platlib")
    return sorted({os.path.realpath(paths[k]) for k in keys})


def _python_dirs() -> list[str]:
    dirs = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix}
    return sorted(d for d in dirs if not any(d == s or d.startswith(s + "/") for s in _SYSTEM_DIRS))


def parent_dirs(path: str) -> list[str]:
    """bwrap's arguments creating `path`'s parents 0755 (bwrap would make them 0700, which
    the dropped uid cannot pass)."""
    return _mkdirs(path)


def _mkdirs(path: str) -> list[str]:
    """bwrap creates missing parents 0700; create them 0755 so the dropped uid can pass."""
    parents = [p for p in Path(path).parents if str(p) != "/"]
    return [a for p in reversed(parents) for a in ("--perms", "0755", "--dir", str(p))]


def _bwrap_argv(
    root: Path, boot_dir: Path | None, tmp_mb: int, as_root: bool, python: bool = True
) -> list[str]:
    """bubblewrap's argv; `python`: the interpreter's folders bound in (a launch that starts
    no Python has no use for them), `boot_dir` (if any) bound read-only."""
    argv = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    argv += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    # As root, bwrap's user namespace would map the sandbox uid to host uid 0, which is exempt
    # from RLIMIT_NPROC; instead keep only setuid/setgid and let the bootstrap drop to the
    # run's throwaway uid.
    argv += (
        ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"] if as_root else ["--unshare-user"]
    )
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            argv += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            argv += ["--ro-bind", d, d]
    for f in _ETC_FILES:
        argv += ["--ro-bind-try", f, f]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
    argv += ["--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/dev/shm"]
    dirs = [*(_python_dirs() if python else ()), *([str(boot_dir)] if boot_dir else ()), str(root)]
    for d in dirs:  # after /tmp: the scratch is in it
        argv += [*_mkdirs(d), "--ro-bind", d, d]
    return [*argv, "--chdir", str(root), "--"]


@functools.cache
def bwrap_works() -> bool:
    """Whether bubblewrap is installed and can build our sandbox here (checked once)."""
    if shutil.which("bwrap") is None or not sys.platform.startswith("linux"):
        return False
    here = Path(__file__).parent
    argv = [*_bwrap_argv(here, here, 1, os.geteuid() == 0), sys.executable, "-I", "-c", "pass"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, env={"PATH": "/usr/bin"})
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def fallback_caps_processes() -> bool:
    """Whether the fallback sandbox can cap the process count here: RLIMIT_NPROC binds any
    uid but 0, so as root it needs the drop to a throwaway uid or a writable pids cgroup."""
    if os.geteuid() != 0 or privilege.can_drop():
        return True
    probe = cgroup.create(1)
    if probe is None:
        return False
    cgroup.destroy(probe)
    return True


def base_env(home: str) -> tuple[tuple[str, str], ...]:
    """What every sandboxed launch's environment starts from, pytest's and a test command's
    alike (each adds its PATH and its own tools' settings): one list, so the two cannot drift."""
    return (
        ("HOME", home),
        ("TMPDIR", home),
        ("USER", "sandbox"),
        ("LOGNAME", "sandbox"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C.UTF-8"),
        ("TZ", "UTC"),
        ("NO_COLOR", "1"),
        # Set reprs print alike every run, so a strict replay sees the same test output: the
        # built-in runner's Python reads it too (PYTHON_FLAGS leave out -I's -E).
        ("PYTHONHASHSEED", "0"),
    )


def _env(home: str, marker: str) -> tuple[tuple[str, str], ...]:
    """Built from an allowlist: nothing of the harness's environment (keys, tokens) leaks in."""
    venv_bin = str(Path(sys.prefix, "bin"))
    return (
        ("PATH", f"{venv_bin}:/usr/local/bin:/usr/bin:/bin"),
        *base_env(home),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1"),
        (MARKER_VAR, marker),
    )


# `python -I` without its -E: no user site (-s), no script folder on sys.path (-P), but the
# environment is read, so PYTHONHASHSEED holds. Safe because the environment is the allowlist
# above, built by the harness whole (no PYTHONPATH, PYTHONSTARTUP or PYTHONHOME of its own).
PYTHON_FLAGS = ("-s", "-P", "-B")

_LAUNCH_MEMORY_MB = 4096  # a launch's memory, all its processes together, unless told


def make_plan(
    kind: str,
    run_dir: Path,
    root: Path,
    tmp_mb: int,
    max_procs: int,
    uid: int | None,
    memory_mb: int = _LAUNCH_MEMORY_MB,
    shared: Path | None = None,
    command: bool = False,
) -> Plan:
    """The command for one launch; `kind` is "bwrap" or "rlimits" (already decided), `uid` the
    run's throwaway uid (None when not root), `memory_mb` the whole launch's memory cap where
    a memory cgroup can be made, `shared` a folder mounted writable at its own path (the
    boundary's: the tests' temporary folders, shared with the candidate's processes).
    `command`: the launch runs a command, not Python; where `bootstrapless(kind)`, the plan is
    a command plan (`direct`: no interpreter bound in, run_dir/boot bound only if it exists),
    otherwise the usual one, for exec.py."""
    marker = secrets.token_hex(16)
    boot = str(run_dir / "boot" / "boot.py")
    # Root: a pids cgroup of its own as well, joined by the bootstrap before anything, which
    # lists every process of the launch for the final sweep however it detached.
    owner = None if kind == "bwrap" else uid
    group = cgroup.create(max_procs, owner, memory_mb) if uid is not None else None
    if kind == "bwrap":
        direct = command and bootstrapless(kind)
        boot_dir = run_dir / "boot"
        boot_dir = boot_dir if not direct or boot_dir.is_dir() else None
        argv = _bwrap_argv(root, boot_dir, tmp_mb, uid is not None, python=not direct)
        binds = [*(cgroup.companions(group) if group is not None else ()), *filter(None, [shared])]
        for path in binds:
            at = argv.index("--chdir")
            argv[at:at] = [*_mkdirs(str(path)), "--bind", str(path), str(path)]
        if direct:
            return Plan(kind, tuple(argv), (), uid, None, marker, group, direct=True)
        python = (sys.executable, *PYTHON_FLAGS, boot)
        return Plan(kind, (*argv, *python), _env("/tmp", marker), uid, None, marker, group)
    env = _env(str(run_dir / "tmp"), marker)
    if uid is None or not privilege.can_drop():
        if not privilege.unsafe():
            raise SandboxError(refusal())
        return Plan(kind, (sys.executable, *PYTHON_FLAGS, boot), env, None, None, marker, group)
    interpreter = privilege.open_interpreter()
    argv = (*interpreter.argv, boot)
    return Plan(kind, argv, (*env, *interpreter.env), None, uid, marker, group, interpreter)


def refusal() -> str:
    """Why the fallback will not run candidate code, and what the operator can do."""
    who = (
        "root, but no throwaway uid can start the interpreter"
        if os.geteuid() == 0
        else ("not root, so there is no other uid to run candidate code as")
    )
    return (
        f"sandbox: bubblewrap is not in use and the harness is {who}: candidate code would run "
        "as the harness's own user and could read its API keys, write its budget ledger and run "
        "directory, and signal its processes. Install bubblewrap (or run the harness as root), "
        f"or set {privilege.UNSAFE_VAR}=1 to accept that risk"
    )


def spawn(
    plan: Plan,
    cwd: Path,
    config: dict[str, Any],
    pipe_owner: int | None = None,
    extra_fds: tuple[int, ...] = (),
) -> Child:
    """Start the process in its own session with the record pipe at an unguessable fd;
    `pipe_owner` gets the pipe, so a process of that uid can reopen it by /dev/fd/N;
    `extra_fds` are inherited as they are (the boundary's sockets)."""
    rec_r, rec_w = os.pipe()
    high = fcntl.fcntl(rec_w, fcntl.F_DUPFD_CLOEXEC, 200 + secrets.randbelow(800))
    os.close(rec_w)
    if pipe_owner is not None:
        os.fchown(high, pipe_owner, pipe_owner)
    out_r, out_w = os.pipe()
    try:
        with _undone_on_failure(plan, (rec_r, out_r), (high, out_w)):
            proc = _popen(plan, cwd, out_w, (high, *extra_fds))
    finally:
        if plan.interpreter is not None:
            plan.interpreter.close()
    cgroup_path = str(plan.cgroup) if plan.cgroup else None
    parent = os.getpid() if plan.kind != "bwrap" else None  # bwrap: --die-with-parent
    sitedirs = plan.interpreter.sitedirs if plan.interpreter else ()
    payload = {"fd": high, "uid": plan.uid, "cgroup": cgroup_path, "parent": parent}
    payload["cgroups"] = [str(p) for p in cgroup.companions(plan.cgroup)] if plan.cgroup else []
    payload["sitedirs"] = list(sitedirs)
    _send_config(proc, {**config, **payload})
    os.set_blocking(rec_r, False)
    os.set_blocking(out_r, False)
    return Child(proc, rec_r, out_r, plan.marker, plan.cgroup)


def _popen(plan: Plan, cwd: Path, out_w: int, fds: tuple[int, ...]) -> subprocess.Popen[bytes]:
    user: dict[str, Any] = {}
    if plan.spawn_user is not None:
        user = {"user": plan.spawn_user, "group": plan.spawn_user, "extra_groups": []}
    inherited = plan.interpreter.fds if plan.interpreter else ()
    return subprocess.Popen(
        list(plan.argv),
        stdin=subprocess.PIPE,
        stdout=out_w,
        stderr=out_w,
        pass_fds=(*fds, *inherited),
        env=dict(plan.env),
        cwd=cwd,
        start_new_session=True,
        **user,
    )


@contextlib.contextmanager
def _undone_on_failure(
    plan: Plan, ours: tuple[int, ...], theirs: tuple[int, ...]
) -> Iterator[None]:
    """Around starting a launch's process: the pipe ends handed to it (`theirs`) are closed
    here either way; if it cannot be started, our ends and the launch's cgroup go too."""
    try:
        yield
    except BaseException:
        for fd in ours:
            os.close(fd)
        if plan.cgroup is not None:
            cgroup.destroy(plan.cgroup)
        raise
    finally:
        for fd in theirs:
            os.close(fd)


def _send_config(proc: subprocess.Popen[bytes], payload: dict[str, Any]) -> None:
    """On stdin, so it never shows in the child's argv or environment."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(payload).encode())
        proc.stdin.close()
    except OSError:
        pass  # died before reading: shows up as a launch with no records


# A launch that runs a command rather than Python (a foreign test command, a JavaScript
# candidate's node) under bubblewrap: the bootstrap's lock-down steps (exec.py: join the
# launch's cgroups, drop to the throwaway uid with no groups, no new privileges, the rlimits,
# then exec) done by the system's own small programs inside the sandbox, so no Python
# interpreter starts (and imports json, pathlib and ctypes) before the command: ≈ 40 ms of CPU
# a launch. The order is the bootstrap's: the cgroups first, before anything can fork; the
# limits lowered while still root, each to at most the harness's own hard limit, as boot.py
# does; then setpriv drops the uid (every capability goes with it) and execs the command.
_TOOLS = ("sh", "prlimit", "setpriv")
_RLIMIT_OPTIONS = {
    "cpu": ("--cpu", resource.RLIMIT_CPU),
    "as": ("--as", resource.RLIMIT_AS),
    "fsize": ("--fsize", resource.RLIMIT_FSIZE),
    "nproc": ("--nproc", resource.RLIMIT_NPROC),
    "core": ("--core", resource.RLIMIT_CORE),
}
# Joins each cgroup named before `--` (its pid as the sandbox sees it, which is how the kernel
# reads a pid the process writes), then execs the rest; a failed join ends the launch.
_JOIN = (
    'while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 126; shift; done; '
    'shift; exec "$@"'
)
# A node launch's join beside node's start-up: a root subshell (its own process, which never
# drops its privileges and never runs anything else) writes the shell's pid into each group,
# while the shell goes on to the limits, the drop and node, whose first preload (JOIN_PRELOAD)
# waits for the join before any other code of the process runs. No cgroup file is ever open in
# the shell, so none can reach node. $1 is what the preload waits for: "<name> <count>".
_JOIN_BESIDE = (
    'spec=$1; shift; (while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 126; '
    'shift; done) & while [ "$1" != -- ]; do shift; done; shift; '
    'export HARNESS_CGROUP_JOIN="$! $spec"; exec "$@"'
)
JOIN_PRELOAD = Path(__file__).parent / "jsnode" / "join.cjs"


@functools.cache
def _lockdown_tools() -> dict[str, str] | None:
    """sh, prlimit and setpriv from /usr (which the sandbox binds as it is), or None."""
    found = {}
    for name in _TOOLS:
        path = shutil.which(name, path="/usr/bin:/bin")
        if path is None or not os.path.realpath(path).startswith("/usr/"):
            return None
        found[name] = path
    return found


def _lockdown(
    groups: list[str], uid: int | None, rlimits: dict[str, int], beside: bool = False
) -> tuple[str, ...]:
    """The lock-down programs' argv, up to the command; `beside`: the join runs beside the
    command's start (_JOIN_BESIDE), for a command that waits for it (JOIN_PRELOAD)."""
    tools = _lockdown_tools()
    assert tools is not None
    steps = [tools["sh"], "-c", _JOIN, "sh", *groups, "--"] if groups else []
    if groups and beside:
        spec = f"{Path(groups[0]).name} {len(groups)}"  # every group has the same name
        steps = [tools["sh"], "-c", _JOIN_BESIDE, "sh", spec, *groups, "--"]
    steps.append(tools["prlimit"])
    for name, value in rlimits.items():
        option, kind = _RLIMIT_OPTIONS[name]
        hard = resource.getrlimit(kind)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        steps.append(f"{option}={value}:{value}")
    steps += ["--", tools["setpriv"]]
    if uid is not None:
        steps += [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    return (*steps, "--no-new-privs", "--")


@functools.cache
def _direct_works() -> bool:
    """Whether the lock-down programs do their work here, in our sandbox (checked once): as
    root, a pids cgroup joined and the drop to a throwaway uid with no other group."""
    if _lockdown_tools() is None or not bwrap_works():
        return False
    here = Path(__file__).parent
    uid = privilege.sandbox_uid()
    group = cgroup.create(4) if uid is not None else None
    groups = [str(p) for p in cgroup.companions(group)] if group is not None else []
    sandbox = _bwrap_argv(here, None, 1, uid is not None, python=False)
    at = sandbox.index("--chdir")
    for path in groups:
        sandbox[at:at] = [*_mkdirs(path), "--bind", path, path]
    check: tuple[str, ...] = ("true",)
    if uid is not None:
        expect = 'test "$(id -u)" = "$1" && test "$(id -G)" = "$1"'
        if group is not None:  # a line `N:pids:/<name>` (v1) or `0::/<name>` (v2)
            expect += ' && grep -q -- ":/$2$" /proc/self/cgroup'
        check = ("sh", "-c", expect, "sh", str(uid), group.name if group is not None else "")
    argv = [*sandbox, *_lockdown(groups, uid, {"core": 0}), *check]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        if group is not None:
            cgroup.destroy(group)
    return done.returncode == 0


def bootstrapless(kind: str) -> bool:
    """Whether a launch of `kind` that runs a command does without the Python bootstrap:
    bubblewrap, and the lock-down programs work here."""
    return kind == "bwrap" and _direct_works()


def runs_node(command: tuple[str, ...]) -> bool:
    """Whether `command` starts node itself (which can wait for a join beside its start)."""
    return bool(command) and os.path.basename(command[0]) == "node"


def place_preload(folder: Path) -> str:
    """Copy JOIN_PRELOAD into `folder` (bound read-only into the launch); its path there."""
    target = folder / JOIN_PRELOAD.name
    shutil.copyfile(JOIN_PRELOAD, target)
    os.chmod(target, 0o444)
    return str(target)


def command_argv(
    plan: Plan,
    sandbox: tuple[str, ...],
    command: tuple[str, ...],
    rlimits: dict[str, int],
    preload: str | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A command plan's whole argv, as (the sandbox and the lock-down, the command):
    `sandbox` is the plan's argv (which binds the launch's cgroups already) as the caller
    adjusted it (its own binds). `preload`: JOIN_PRELOAD's path inside the sandbox (from
    `place_preload`, in a read-only folder); a node command (`runs_node`) then joins its
    cgroups beside its start, preloading it first of all; any other command joins before."""
    assert plan.direct
    groups = [str(p) for p in cgroup.companions(plan.cgroup)] if plan.cgroup else []
    beside = bool(preload) and bool(groups) and runs_node(command)
    if beside:
        command = (command[0], f"--require={preload}", *command[1:])
    return (*sandbox, *_lockdown(groups, plan.uid, rlimits, beside)), tuple(command)


def spawn_command(
    plan: Plan,
    argv: tuple[tuple[str, ...], tuple[str, ...]],
    cwd: Path,
    env: tuple[tuple[str, str], ...],
    report: bool = False,
    pipe_owner: int | None = None,
    extra_fds: tuple[int, ...] = (),
) -> Child:
    """Start a `command_argv` in its own session, stdin /dev/null (no configuration to read).
    With `report`, the record pipe's write end goes to the command at an unguessable fd, owned
    by `pipe_owner` (who can then reopen it by /dev/fd/N) and named by `{results}` in the
    command; without, the command is never handed it (its read end sees an end of file)."""
    head, command = argv
    rec_r, rec_w = os.pipe()
    high = fcntl.fcntl(rec_w, fcntl.F_DUPFD_CLOEXEC, 200 + secrets.randbelow(800))
    os.close(rec_w)
    if pipe_owner is not None:
        os.fchown(high, pipe_owner, pipe_owner)
    if report:
        command = tuple(a.replace("{results}", f"/dev/fd/{high}") for a in command)
    out_r, out_w = os.pipe()
    with _undone_on_failure(plan, (rec_r, out_r), (high, out_w)):
        proc = subprocess.Popen(
            [*head, *command],
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=out_w,
            pass_fds=(high, *extra_fds) if report else extra_fds,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    os.set_blocking(rec_r, False)
    os.set_blocking(out_r, False)
    return Child(proc, rec_r, out_r, plan.marker, plan.cgroup)
