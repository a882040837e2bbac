"""Sandbox entry point: lock the process down, arm the audit hook, register the recorder, run
pytest, vanish.

Runs inside the sandbox as `python -s -P -B boot.py` (launch.PYTHON_FLAGS), so it imports only
the standard library, pytest, orjson (the boundary's message text) and its sibling files (loaded
by path; the harness package is not visible).
Its configuration arrives on stdin, never in argv or the environment, where candidate code
could read it from /proc.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import json
import os
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

_LIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "as": resource.RLIMIT_AS,
    "nproc": resource.RLIMIT_NPROC,
    "fsize": resource.RLIMIT_FSIZE,
    "core": resource.RLIMIT_CORE,
}


def _read_config() -> dict:
    raw = sys.stdin.buffer.read()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return json.loads(raw)


def _join_cgroup(path: str | None) -> None:
    """Enter the launch's pids cgroup before anything can fork (root fallback only)."""
    if path:
        with open(os.path.join(path, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))


def _joining(paths: list) -> Callable[[], None]:
    """Join the launch's cgroups on a thread of their own; the returned wait ends when they
    are joined (and ends the process if a join failed). A join under cgroup v1 waits out an
    RCU grace period, 5-10 ms a group on this kernel however idle the machine: on a thread
    it overlaps the import of pytest (trusted code that starts no process) rather than
    preceding it. Every caller waits before the first line of anyone else's code (a
    conftest, a test, the candidate module) runs. The files are opened here, before the
    privilege drop: the kernel checks a write to cgroup.procs against the opener's
    credentials, so the thread's write after the drop is still root's."""
    import threading

    failed: list[BaseException] = []
    try:
        handles = [open(os.path.join(p, "cgroup.procs"), "w") for p in paths if p]  # noqa: SIM115
    except OSError as exc:
        raise SystemExit(f"sandbox: could not join the launch's cgroup: {exc}") from None

    def join() -> None:
        for handle in handles:
            try:
                with handle:
                    handle.write(str(os.getpid()))
            except BaseException as exc:
                failed.append(exc)

    thread = threading.Thread(target=join, name="cgroup-join", daemon=True)
    thread.start()

    def wait() -> None:
        thread.join()
        if failed:
            raise SystemExit(f"sandbox: could not join the launch's cgroup: {failed[0]}")

    return wait


def _drop_privileges(uid: int | None) -> None:
    """Become the unprivileged user for good (bwrap as root keeps CAP_SETUID just for this)."""
    if uid is None:
        return
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() == 0 or os.geteuid() == 0:
        raise SystemExit("sandbox: could not drop privileges")


def _set_limits(limits: dict[str, int]) -> None:
    """Lower every limit (soft = hard, so the code cannot raise it again); a limit the platform
    does not support (RLIMIT_AS on macOS) is skipped rather than failing the run."""
    for name, value in limits.items():
        kind = _LIMITS[name]
        try:
            _, hard = resource.getrlimit(kind)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(kind, (value, value))
        except (ValueError, OSError) as exc:
            print(f"sandbox: rlimit {name} not set: {exc}", file=sys.stderr)


def _no_new_privileges(parent: int | None) -> None:
    """Setuid programs must not hand the tests privileges back, and without bwrap (whose
    --die-with-parent does it) the tests die with the harness even if it is killed outright."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
        if parent is not None:
            libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = SIGKILL
            if os.getppid() != parent:  # the harness died before we got here
                os._exit(1)


def _add_site_packages(sitedirs: list[str]) -> None:
    """Fallback drop: the interpreter ran with -S, its site-packages reached through fds."""
    if sitedirs:
        import site

        for path in sitedirs:
            site.addsitedir(path)


def _load_sibling(name: str) -> ModuleType:
    """By path and kept out of sys.modules, so candidate code finds no module to rewrite."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_harness_sandbox_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _preload(names: list[str], paths: list[str]) -> None:
    """Import the library modules the tests name (see classify.adopt). A name the scratch tree
    provides (the candidate, a support module, beside the tests or not) is left to the tests,
    as is a failing import: collection will fail on it the same way and say why. A library
    one of them imports under such a name (hypothesis imports sortedcontainers) stays theirs:
    the tests import the scratch tree's."""
    from importlib.machinery import PathFinder

    before, found = set(sys.modules), {}

    def scratch_has(name: str) -> bool:
        top = name.partition(".")[0]
        if top not in found:
            found[top] = PathFinder.find_spec(top, paths) is not None
        return found[top]

    for name in names:
        if not scratch_has(name):
            with contextlib.suppress(Exception):
                importlib.import_module(name)
    for name in [n for n in list(sys.modules) if n not in before and scratch_has(n)]:
        del sys.modules[name]


def _arm(config: dict) -> SimpleNamespace:
    """Install the audit hook, import pytest under it, and build what the vault checks with."""
    boot_dir = os.path.dirname(os.path.abspath(__file__))
    code = _load_sibling("classify").build(config["library"], boot_dir, config["test_code"])
    stack = _load_sibling("stack").build(code.classify, boot_dir)
    readable = tuple(config.get("readable") or ())
    files = _load_sibling("files").build(config["protected"], stack, boot_dir, readable)
    notify: list = []
    hushed = _load_sibling("shield").install(stack, files, notify)
    import pytest  # noqa: F401  (under the hook, before any candidate-controlled path)

    test_dirs = [os.path.dirname(f) for f in config["test_code"]]  # pytest puts them on sys.path
    _preload(config["preload"], list(dict.fromkeys([*config["paths"], *test_dirs])))
    code.adopt(list(sys.modules.values()))

    recorder, vault = _load_sibling("recorder"), _load_sibling("vault")
    guard = _load_sibling("guard").build(stack, hushed)
    describe, is_library = _load_sibling("texts").describe, stack.is_library
    plugin = recorder.Recorder(
        config, lambda longrepr, collecting: describe(longrepr, is_library, collecting)
    )
    parts = SimpleNamespace(
        own=recorder.own_code(),
        plugin=plugin,
        candidate=config["candidate"],
        stack=stack,
        guard=guard,
        semantics=_load_sibling("semantics").build(guard.kind_of),
        protected=config["protected"],
    )
    plugin._send = vault.open_vault(config["fd"], config["nonce"], parts)
    notify.append(plugin._send)
    return SimpleNamespace(plugin=plugin, pytest=sys.modules["pytest"])


def _load_boundary(name: str) -> ModuleType:
    """A module of the boundary package copied beside this file (`harness_boundary`)."""
    if "harness_boundary" not in sys.modules:
        init = Path(__file__).with_name("harness_boundary") / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            "harness_boundary", init, submodule_search_locations=[str(init.parent)]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules["harness_boundary"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"harness_boundary.{name}")


def _serve_candidate(config: dict, joined: Callable[[], None]) -> None:
    """Boundary mode, the candidate's process: no tests here, no records to write; answer
    the test process on the socket until it closes (its first request imports the candidate
    module, so the cgroups are joined before it is read)."""
    os.close(config["fd"])
    serve = _load_boundary("candidate").serve
    joined()
    sys.path[:0] = config["paths"]
    serve(config["socket"], config["support"])


def _arm_boundary(config: dict) -> SimpleNamespace:
    """Boundary mode, the tests' process: no candidate code ever runs here, so the recorder
    needs no guard; the candidate module is the proxy (harness_boundary.proxy)."""
    import pytest  # noqa: F401

    _load_boundary("proxy").configure(
        config["broker"], config["support"], config.get("observed"), config.get("shared")
    )
    recorder, vault = _load_sibling("recorder"), _load_sibling("vault")
    describe = _load_sibling("texts").describe
    plugin = recorder.Recorder(
        config, lambda longrepr, collecting: describe(longrepr, _no, collecting)
    )
    parts = SimpleNamespace(
        own=recorder.own_code(),
        plugin=plugin,
        candidate=config["candidate"],
        stack=SimpleNamespace(clean=lambda frame: True),
        guard=SimpleNamespace(
            check=lambda *a: None,
            watch=lambda *a: None,
            impostor=lambda items: None,
            rebase=lambda *a: None,
        ),
        semantics=SimpleNamespace(wrap=lambda *a: None, intact=lambda: None),
        protected=config["protected"],
    )
    plugin._send = vault.open_vault(config["fd"], config["nonce"], parts)
    return SimpleNamespace(plugin=plugin, pytest=sys.modules["pytest"])


def _no(path: str) -> bool:
    return False


def main() -> None:
    config = _read_config()
    # Opened as root, written on a thread: it is one more task against RLIMIT_NPROC, so it
    # starts before the limits are lowered.
    joined = _joining(config.get("cgroups") or [config.get("cgroup")])
    _drop_privileges(config.get("uid"))
    _no_new_privileges(config.get("parent"))
    _set_limits(config["rlimits"])
    _add_site_packages(config.get("sitedirs") or ())
    role = config.get("role")
    if role == "candidate":
        gc.freeze()  # see below
        _serve_candidate(config, joined)
        os._exit(0)
    armed = _arm_boundary(config) if role == "tests" else _arm(config)
    joined()
    sys.path[:0] = config["paths"]
    args = config["args"]
    del config  # the nonce and the pipe live in the vault only, not in this frame
    # What is alive now (the interpreter, pytest, the harness's own modules) stays alive to
    # the end: out of the collector's sight, pytest's full collections at the session's end
    # walk only what the tests made.
    gc.freeze()
    status: object = None
    try:
        status = armed.pytest.main(args, plugins=[armed.plugin])
    except BaseException as exc:  # the candidate may raise anything out of pytest.main
        status = f"{type(exc).__name__}: {exc}"[:500]
    armed.plugin.end(status)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(BaseException):  # a replaced stream must not hold us up
            stream.flush()
    # No atexit hooks, finalizers or thread joins: nothing the candidate registered runs now.
    os._exit(0)


if __name__ == "__main__":
    main()
