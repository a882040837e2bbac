"""Runtime enforcement inside the sandbox: a PEP 578 audit hook that refuses candidate code the
roads out of its own objects (frames, gc, ctypes, tracing), the tests' files, processes,
signals and sockets.

The bootstrap installs it before pytest or any candidate code is imported, and CPython offers
no way to remove an audit hook. Who asks is decided from the stack: walking out from the
operation, the first frame that is not library code (stdlib, site-packages, these files) must
belong to a test or support file; a candidate frame is refused. Everything the hook decides
with lives in closures bound at install time: no class, module global or builtin that candidate
code could reach and rewrite is consulted once it runs (see `_stack` and `_files`).
Imports: standard library only, and the sibling files loaded by the bootstrap.
"""

from __future__ import annotations

import _imp
import _posixsubprocess
import _signal
import _thread
import signal
import sys
from typing import Any

_ALWAYS = {
    "sys.settrace": "trace code",
    "sys.setprofile": "trace code",
    "sys.addaudithook": "add audit hooks",
}
_CANDIDATE = {
    event: why
    for why, events in {
        "walk the gc": "gc.get_objects gc.get_referrers gc.get_referents",
        "read frames": "sys._current_frames sys._current_exceptions",
        "start processes": "os.fork os.forkpty os.posix_spawn os.spawn os.exec os.system "
        "subprocess.Popen",
        "send signals": "os.kill os.killpg signal.pthread_kill",
        "create links": "os.symlink os.link",
        "use the network": "socket.connect socket.bind socket.sendto socket.sendmsg "
        "socket.getaddrinfo socket.gethostbyname socket.gethostbyaddr",
    }.items()
    for event in events.split()
}
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_TEST_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
_SET_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__bases__", "__class__"})
_DENY_IMPORTS = frozenset(
    {"ctypes", "_ctypes", "cffi", "_cffi_backend", "_testcapi", "_testinternalcapi", "gc"}
    | {"_testbuffer", "_testmultiphase", "_xxsubinterpreters", "_posixsubprocess", "_signal"}
    | {"_imp", "_lsprof"}
)
_CODE_EVENTS = frozenset({"compile", "code.__new__", "exec", "function.__new__"})


def install(stack: Any, files: Any, notify: list) -> Any:
    """Guard the unaudited roads (signal handlers, raw spawns), then add the hook.

    `stack` and `files` are what stack.build and files.build return; each refusal is also
    sent to notify[0] once the bootstrap put the vault's send() there: refused attempts are
    tampering, whether or not the candidate catches the error."""
    _guard_unaudited(stack, notify)
    hook, busy = _hook(_decider(stack, files), notify)
    sys.addaudithook(hook)
    return _hush(busy)


def _hush(busy: set):
    """hushed(fn) -> fn run with the hook passing over its thread's events. Only for the
    harness's own checks that run no candidate code (they read dicts and types through the
    type's own accessors) and raise audit events by the thousand: every function's
    `__code__` read is one, and each would walk the stack to ask whose it is."""
    ident = _thread.get_ident

    def hushed(fn: Any) -> Any:
        def run(*args: Any) -> Any:
            me = ident()
            if me in busy:
                return fn(*args)
            busy.add(me)
            try:
                return fn(*args)
            finally:
                busy.discard(me)

        return run

    return hushed


def _decider(stack: Any, files: Any):
    """decide(event, args, caller) -> what the candidate may not do, or None."""
    always, by_candidate, frame_attrs = dict(_ALWAYS), dict(_CANDIDATE), _FRAME_ATTRS
    test_attrs, set_attrs, deny_imports = _TEST_ATTRS, _SET_ATTRS, _DENY_IMPORTS
    code_events, str_, type_ = _CODE_EVENTS, str, type
    asks, asks_frames = stack.candidate_asks, stack.candidate_asks_for_frames
    is_test, refused_change = stack.is_test_object, stack.refused_change
    spoofed, opened = files.spoofed_code, files.refused_open

    def decide(event: str, args: tuple, caller: Any) -> str | None:
        if event in always:
            return always[event]
        if event in by_candidate:
            return by_candidate[event] if asks(caller) else None
        if event == "sys._getframe":
            return "read frames" if asks_frames(caller) else None
        if event == "object.__getattr__" and args[1] in frame_attrs:
            return "read frames" if asks_frames(caller, args[1]) else None
        if event == "object.__getattr__":
            hit = args[1] in test_attrs and is_test(args[0])
            return f"read a test's {args[1]}" if hit and asks(caller) else None
        if event in ("object.__setattr__", "object.__delattr__"):
            hit = args[1] in set_attrs and refused_change(args[0], args[2:], caller)
            return f"change {args[1]}" if hit else None
        if event == "import":
            hit = type_(args[0]) is str_ and args[0].partition(".")[0] in deny_imports
            return f"import {args[0]}" if hit and asks(caller) else None
        if event.startswith("ctypes."):
            return "use ctypes" if asks(caller) else None
        if event in code_events:
            return spoofed(event, args, caller)
        return opened(args, caller) if event == "open" else None

    return decide


def _hook(decide: Any, notify: list):
    getframe, ident, busy, perm, base = (
        sys._getframe,
        _thread.get_ident,
        set(),
        PermissionError,
        BaseException,
    )

    def hook(event: str, args: tuple) -> None:
        me = ident()
        if me in busy:  # the hook's own frame walks raise events of their own
            return
        busy.add(me)
        try:
            refused = decide(event, args, getframe(1))
        finally:
            busy.discard(me)
        if refused:
            for send in notify:
                try:  # noqa: SIM105  (contextlib is the candidate's to rewrite)
                    send(("tamper", f"candidate code tried to {refused}"))
                except base:  # the vault is busy (it will see the error itself)
                    pass
            raise perm(f"sandbox: candidate code may not {refused}")

    return hook, busy


def _guard_unaudited(stack: Any, notify: list) -> None:
    """Signal handlers receive frames and _posixsubprocess raises no audit event: both go
    through a vault, and so does _imp's module creation, which would hand out fresh copies."""
    names = ("create_builtin", "create_dynamic")
    originals = {
        "signal": _signal.signal,
        "fork_exec": _posixsubprocess.fork_exec,
        **{name: getattr(_imp, name) for name in names},
    }
    send = _vault(originals, _refusal(stack), notify)
    _signal.signal = _forwarder("signal", send)
    signal.signal.__wrapped__ = _signal.signal  # functools.wraps kept the original there
    _posixsubprocess.fork_exec = _forwarder("fork_exec", send)
    for name in names:
        setattr(_imp, name, _forwarder(name, send))


def _forwarder(name: str, send: Any):
    def forward(*args: Any, **kwargs: Any) -> Any:
        ok, value = send((name, args, kwargs))
        if ok:
            return value
        raise value

    forward.__name__ = forward.__qualname__ = name
    return forward


def _spec_name():
    """The name a module spec will be created under, or None when reading it could differ
    from what _imp reads (a spec of another class, or ModuleSpec itself rewritten)."""
    spec_type = type(sys.__spec__)
    kept = dict(vars(spec_type))
    type_, vars_, str_, missing = type, vars, str, object()

    def name_of(spec: Any) -> str | None:
        if type_(spec) is not spec_type or "name" in kept:
            return None
        for key, value in kept.items():
            if vars_(spec_type).get(key, missing) is not value:
                return None
        name = vars_(spec).get("name")
        return name if type_(name) is str_ else None

    return name_of


def _refusal(stack: Any):
    """Why a call through the vault is refused (None: it is not): a signal handler of the
    candidate's own (it would receive frames), a spawn the candidate asks for, or a fresh copy
    of a module the sandbox wrapped."""
    asks, origin, classify, name_of = (
        stack.candidate_asks,
        stack.origin,
        stack.classify,
        (_spec_name()),
    )
    denied, type_, str_, cand, len_ = _DENY_IMPORTS, type, str, 2, len

    def refusal(name: Any, args: tuple, caller: Any) -> str | None:
        if type_(name) is not str_:
            return "call the vault"
        if name == "signal":
            handler = args[1] if len_(args) > 1 else None
            mine = origin(handler) == cand or classify(caller.f_code) == cand
            return "install its own signal handlers" if mine and asks(caller) else None
        if not asks(caller):
            return None
        if name == "fork_exec":
            return "start processes"
        return None if name_of(args[0]) not in (None, *denied) else f"create module {name}"

    return refusal


def _vault(originals: dict, refusal: Any, notify: list):
    """A generator whose frame alone holds the originals: reaching them takes gi_frame, which
    the hook refuses, and calling send() directly puts the candidate on the stack it checks."""

    def run(originals=originals, refusal=refusal, getframe=sys._getframe, notify=notify):
        base, perm = BaseException, PermissionError
        reply = None
        while True:
            try:
                name, args, kwargs = yield reply
                refused = refusal(name, args, getframe(1))
                if refused:
                    for send in notify:
                        send(("tamper", f"candidate code tried to {refused}"))
                    reply = (False, perm(f"sandbox: candidate code may not {refused}"))
                else:
                    reply = (True, originals[name](*args, **kwargs))
            except base as exc:  # raised by the call, or thrown in: the vault stays alive
                reply = (False, exc)

    gen = run()
    next(gen)
    return gen.send
