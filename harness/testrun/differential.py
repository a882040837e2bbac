"""Differential checks: the candidate against its reference, call by call, by value.

When the task's reference is a Python module the port replaces (every `module_port` task),
the reference is an oracle. After the tests, the harness starts two sandboxed processes
behind the value boundary (the same sandbox and `CandidateSide` as a candidate's): one with
the candidate, one with the reference at the output's place. A driver here, without pytest,
makes the same calls in both (public module-level functions, classes, and the methods of the
objects those made) with the same arguments and compares what came back by value (the
codec's nodes, class references by name): the return value, or the exception's class name
and (with `messages`) its text; and the copy-back, the list, dict and set arguments the call
changed.

- **Observed calls**: the calls the visible tests made (logged by the test process,
  boundary/observe.py), replayed in order; an object a call made is made in each process,
  and the tests' calls on its methods are made on those. The log supplies inputs only: both
  results come from the processes started here, so a forged line can only add a call to
  check.
- **Generated calls**: hypothesis draws arguments for each public function and method from
  the observed arguments (their values and types) and the reference's annotations and
  defaults, with a fixed seed, a budget of examples and seconds, and shrinks a difference to
  a small input; each method call gets an object of its own.
- **Nondeterminism**: each call runs twice on the reference, before and after the
  candidate's (a method: on two objects of the reference made alike); when the two results
  differ (a clock, random numbers) the call is left out with the reason, never counted a
  difference.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import socket
import string
import time
from dataclasses import dataclass, replace
from typing import Any

from harness.results import Difference, Differential
from harness.testrun import litter, privilege
from harness.testrun.boundary import codec, wire
from harness.testrun.reap import kill_tree
from harness.testrun.scratch import remove_tree
from harness.testrun.session import (
    Run,
    _candidate_folder,
    _shared_folder,
    _start_candidate,
    support_modules,
)

__all__ = ["DifferentialSettings", "check", "reference_code"]


MAX_DIFFERENCES = 5  # kept per attempt, in the order found: what a fix prompt is fed
_CALL_TIMEOUT_S = 10.0
# Nodes that stand for an object of one process (not a value): a call that passes or returns
# one cannot be repeated elsewhere by value.
_BY_HANDLE = frozenset({"h", "r", "lv"})
_BY_REF = frozenset({"dc", "nt", "en", "x", "fn", "k"})


@dataclass(frozen=True)
class DifferentialSettings:
    """`differential:` of the config (harness/config/models.py) and of a task.

    `enabled` None: on for `module_port` tasks. `examples` generated calls per public
    function, within `seconds` for the whole task; `required`: a task passes only if it also
    agrees; `ignore`: function names or calls (fnmatch patterns) left out; `messages`: an
    exception's text must match too, not only its class; `seed`: of the generated calls, fixed
    so a candidate's result repeats."""

    enabled: bool | None = None
    examples: int = 200
    seconds: float = 120.0
    required: bool = False
    ignore: tuple[str, ...] = ()
    messages: bool = True
    seed: int = 0

    def over(self, keys: tuple[tuple[str, object], ...]) -> DifferentialSettings:
        """These settings with a task's own `differential:` keys (TaskSpec.differential)."""
        found = {k: tuple(v) if isinstance(v, list | tuple) else v for k, v in keys}
        return replace(self, **found)  # type: ignore[arg-type]

    def applies(self, task_type: str) -> bool:
        return self.enabled if self.enabled is not None else task_type == "module_port"


class Opaque(Exception):
    """A value that crossed as a handle: it has no value to compare."""


class Dead(Exception):
    """The process died or hung on a call."""


def reference_code(reference: tuple[Any, ...]) -> tuple[str | None, str]:
    """The reference module's text, or None and why it cannot be the oracle."""
    if len(reference) != 1 or not str(reference[0]).endswith(".py"):
        return None, "the reference is not one Python module"
    try:
        return reference[0].read_text(encoding="utf-8"), ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"the reference could not be read ({type(exc).__name__})"


# --- one module in its own sandboxed process ------------------------------------------------


class Process:
    """A candidate process serving `code` as the module `name`, driven by raw requests."""

    def __init__(self, run: Run, code: str, name: str, uid: int | None) -> None:
        self.run, self.name, self.uid = replace(run, code=code), name, uid
        self.folder = _candidate_folder(self.run, uid)
        self.shared = _shared_folder(self.folder, uid)
        self.child: Any = None
        self.side: wire.Side | None = None
        self.functions: dict[str, tuple[int, dict]] = {}
        self.types: dict[str, tuple[int, dict]] = {}  # the module's public classes
        self.seq, self.tid, self.classes = 0, 0, {}
        self.last: int | None = None  # the object the last request gave back, by id
        self.start()

    def start(self) -> None:
        self.stop()
        mine, theirs = socket.socketpair()
        try:
            fd = theirs.fileno()
            self.child = _start_candidate(self.run, self.folder, self.uid, self.shared, fd)
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        mine.settimeout(_CALL_TIMEOUT_S)
        support = support_modules(self.run.pristine, self.run.candidate_rel)
        self.side = wire.Side(mine, frozenset(support), True)
        self.seq, self.tid, self.classes = 0, 0, {}
        module = self.ask("import", n=self.name)
        if "x" in module:
            raise Dead(f"it could not be imported: {_exception_text(module['x'])}")
        hid = module.get("v", [None, None])[1]
        names = self.ask("names", h=hid).get("v")
        self.functions, self.types = {}, {}
        for node in (names or [None, []])[1][:500]:
            name = node[1] if type(node) is list and len(node) == 2 else None
            if type(name) is not str or name.startswith("_"):
                continue
            value = self.ask("get", h=hid, n=name).get("v")
            with contextlib.suppress(Opaque):
                self.canon(value)  # a class or function described in full once: its name
            if type(value) is list and value[:1] == ["fn"] and len(value) == 3:
                meta = value[2] if type(value[2]) is dict else {}
                own = meta.get("module") == self.name and "." not in str(meta.get("qualname"))
                if own and not meta.get("bound") and not meta.get("coroutine"):
                    self.functions[name] = (value[1], meta)
            if type(value) is list and value[:1] == ["k"] and len(value) == 3:
                meta = value[2] if type(value[2]) is dict else {}
                if meta.get("module") == self.name and meta.get("qualname") == name:
                    self.types[name] = (value[1], meta)

    def methods(self, cls: str) -> dict[str, dict]:
        """The public methods class `cls` defines (its own, not inherited): their
        descriptions, `self` left out of their parameters; and `__init__`'s, if its own."""
        found: dict[str, dict] = {}
        hid = self.types[cls][0]
        names = (self.ask("names", h=hid).get("v") or [None, []])[1]
        listed = [n[1] for n in names[:200] if type(n) is list and len(n) == 2]
        for name in [*listed, "__init__"]:
            if type(name) is not str or (name.startswith("_") and name != "__init__"):
                continue
            value = self.ask("get", h=hid, n=name).get("v")
            with contextlib.suppress(Opaque):
                self.canon(value)
            if type(value) is not list or value[:1] != ["fn"] or len(value) != 3:
                continue  # a property, a class method, a class attribute
            meta = value[2] if type(value[2]) is dict else {}
            params = meta.get("params")
            own = meta.get("qualname") == f"{cls}.{name}" and meta.get("module") == self.name
            if own and not meta.get("bound") and not meta.get("coroutine") and params:
                found[name] = {**meta, "params": params[1:]}
        return found

    def ask(self, op: str, **fields: Any) -> dict:
        """One request; the reply as it came (a dead or hung process raises Dead)."""
        side = self.side
        if side is None:
            raise Dead("the process is not running")
        self.seq += 1
        try:
            side.send({"q": op, "i": self.seq, **fields})
            while True:
                message = side.receive()
                if "q" not in message:
                    break
                # The module asked something of us: we passed it values only.
                refusal = codec.encode(TypeError("no callbacks in a differential check"), side)
                side.send({"a": message.get("i"), "x": refusal})
        except (OSError, wire.BoundaryError, codec.CodecError) as exc:
            self.side = None
            raise Dead(_died(exc)) from None
        if message.get("a") != self.seq:
            self.side = None
            raise Dead("it broke the protocol")
        return message

    def call(self, name: str, args: list, kwargs: list) -> tuple:
        """The outcome of one call: ("returns", value node, changed) or ("raises", class,
        message, changed), value nodes made comparable (class references by name); `changed`:
        the arguments (a list, dict or set) the call changed, as (position or name, value)."""
        if name not in self.functions:
            return ("missing", name)
        fields: dict[str, Any] = {"h": self.functions[name][0], "a": args}
        if kwargs:
            fields["k"] = kwargs
        return self.request("call", fields)

    def construct(self, cls: str, args: list, kwargs: list) -> tuple:
        """The outcome of calling the module's class `cls` (an object made: "opaque")."""
        if cls not in self.types:
            return ("missing", cls)
        fields: dict[str, Any] = {"h": self.types[cls][0], "a": args}
        if kwargs:
            fields["k"] = kwargs
        return self.request("call", fields)

    def method(self, hid: int | None, name: str, args: list, kwargs: list) -> tuple:
        """The outcome of calling method `name` of this process's object `hid`."""
        if hid is None:
            return ("died", "its object was lost")
        fields: dict[str, Any] = {"h": hid, "n": name, "a": args}
        if kwargs:
            fields["k"] = kwargs
        return self.request("xcall", fields)

    def request(self, op: str, fields: dict[str, Any]) -> tuple:
        """One call-like request (`call`, `xcall`), its arguments watched for copy-back."""
        watched: dict[int, Any] = {}
        pairs = [*enumerate(fields.get("a") or []), *(fields.get("k") or [])]
        for key, node in pairs:
            if type(node) is list and node[:1] in (["l"], ["d"], ["s"]):
                self.tid += 1
                watched[self.tid] = key
        if watched:
            fields = {**fields, "t": [[key, tid] for tid, key in watched.items()]}
        self.last = None
        try:
            reply = self.ask(op, **fields)
        except Dead as exc:
            with contextlib.suppress(Exception):
                self.start()
            return ("died", str(exc))
        changed: list[tuple] = []
        for entry in reply.get("cb") or []:
            if type(entry) is list and len(entry) == 2 and entry[0] in watched:
                with contextlib.suppress(Opaque):
                    changed.append((watched[entry[0]], self.canon(entry[1])))
        moved = tuple(sorted(changed, key=lambda c: (type(c[0]) is str, c[0])))
        if "x" in reply:
            node = reply["x"]
            return ("raises", _exception_name(node), _exception_text(node), moved)
        try:
            return ("returns", self.canon(reply.get("v")), moved)
        except Opaque:
            value = reply.get("v")
            if type(value) is list and value[:1] == ["h"] and type(value[1]) is int:
                self.last = value[1]  # an object: its id here, for calls of its methods
            return ("opaque", "", moved)

    def canon(self, node: Any) -> Any:
        """A value node comparable across processes: handles refused, class ids by name."""
        if type(node) is not list or not node:
            return node
        tag = node[0]
        if type(tag) is not str:
            return [self.canon(part) for part in node]
        if tag in _BY_HANDLE and len(node) >= 2 and type(node[1]) is int:
            raise Opaque(tag)
        if tag in ("k", "fn") and len(node) in (2, 3) and type(node[1]) is int:
            if len(node) == 3 and type(node[2]) is dict:
                self.classes[(tag, node[1])] = str(node[2].get("qualname"))
            return [tag, self.classes.get((tag, node[1]), "?")]
        if tag == "x" and len(node) == 7:
            return ["x", _exception_name(node), node[6]]
        return [self.canon(part) for part in node]

    def stop(self) -> None:
        if self.side is not None and self.side.sock is not None:
            with contextlib.suppress(OSError):
                self.side.sock.close()
        self.side = None
        child, self.child = self.child, None
        if child is not None and child.records_fd >= 0:
            kill_tree(child)
            for fd in (child.records_fd, child.output_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def close(self) -> None:
        self.stop()
        remove_tree(self.folder)


def _died(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return f"it did not answer within {_CALL_TIMEOUT_S:g}s"
    return "its process died"


def _exception_name(node: Any) -> str:
    mro = node[2] if type(node) is list and len(node) > 2 and type(node[2]) is list else []
    first = mro[0] if mro and type(mro[0]) is list and len(mro[0]) == 2 else ["?", "Exception"]
    return str(first[1])


def _exception_text(node: Any) -> str:
    return str(node[6]) if type(node) is list and len(node) == 7 else ""


# --- values as text ---------------------------------------------------------------------------


def _plain(node: Any) -> bool:
    """A node that is a value of builtins only (no handle, record or class by reference)."""
    if type(node) is not list:
        return True
    if node and type(node[0]) is str and len(node) >= 2:
        if node[0] in _BY_HANDLE or node[0] in _BY_REF:
            return False
        if node[0] == "dd" and type(node[1]) is not str:
            return False
    return all(_plain(part) for part in node)


_PLAIN_SIDE = wire.Side(None, frozenset(), True)


def _value(node: Any) -> Any:
    return codec.decode(node, _PLAIN_SIDE)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _show_node(node: Any) -> str:
    """A canonical value node as Python-like text."""
    if type(node) is list and node[:1] in (["nt"], ["dc"]) and len(node) >= 4:
        name = node[1][1] if type(node[1]) is list and len(node[1]) == 2 else "?"
        pairs = zip(node[2], node[3], strict=False) if type(node[2]) is list else ()
        return f"{name}({', '.join(f'{k}={_show_node(v)}' for k, v in pairs)})"
    if type(node) is list and node[:1] == ["en"] and len(node) == 5:
        name = node[1][1] if type(node[1]) is list and len(node[1]) == 2 else "?"
        return f"{name}.{node[4]}"
    try:
        return _show(_value(node))
    except Exception:
        return json.dumps(node)[:300]


def _said(outcome: tuple) -> str:
    if outcome[0] == "returns":
        return f"returns `{_show_node(outcome[1])}`{_changes(outcome[2])}"
    if outcome[0] == "raises":
        return f"raises `{outcome[1]}({outcome[2]!r})`{_changes(outcome[3])}"
    if outcome[0] == "missing":
        return f"has no public function `{outcome[1]}`"
    if outcome[0] == "opaque":  # where the reference returned a value
        return "returns an object that is not a value (it crossed as a handle)"
    return f"fails: {outcome[1]}"


def _changes(changed: tuple) -> str:
    """The copy-back of a call, as text: the arguments it changed and their new values."""
    said = [
        f"argument {key + 1 if type(key) is int else key} to `{_show_node(node)}`"
        for key, node in changed
    ]
    return f" and changes {', '.join(said)}" if said else ""


def _call_text(name: str, args: list, kwargs: list) -> str:
    parts = [_show_node(a) for a in args]
    parts += [f"{k}={_show_node(v)}" for k, v in kwargs]
    return f"{name}({', '.join(parts)})"


# --- the check ----------------------------------------------------------------------------------


@dataclass
class Tally:
    agreed: int = 0
    differed: int = 0
    skipped: int = 0
    differences: list[Difference] | None = None
    notes: list[str] | None = None

    def note(self, text: str) -> None:
        assert self.notes is not None
        if text not in self.notes and len(self.notes) < 50:
            self.notes.append(text)

    def differ(self, found: Difference) -> None:
        assert self.differences is not None
        self.differed += 1
        known = any(d.call == found.call for d in self.differences)
        if len(self.differences) < MAX_DIFFERENCES and not known:
            self.differences.append(found)

    def result(self, required: bool) -> Differential:
        return Differential(
            self.agreed,
            self.differed,
            self.skipped,
            tuple(self.differences or ()),
            tuple(self.notes or ()),
            required=required,
        )


_CONFIRM = 12  # more runs of the reference before a difference counts (see compare_with)


@dataclass
class Made:
    """An object the replayed calls made in each process: its ids (the reference's two, the
    candidate's), the call that made it, and the calls on it since (to make it again)."""

    handles: tuple[int, int, int]
    text: str
    make: Any  # make(process) -> outcome: the making call, or None (a method made it)
    steps: list[tuple[str, list, list]]


class Pair:
    """The candidate's and the reference's processes, and how their outcomes compare.

    `objects`: the objects the replayed calls made, by the key the tests' log names them."""

    def __init__(self, candidate: Process, reference: Process, settings: DifferentialSettings):
        self.candidate, self.reference, self.settings = candidate, reference, settings
        self.objects: dict[str, Made] = {}

    def same(self, mine: tuple, theirs: tuple) -> bool:
        if mine[0] == theirs[0] == "raises" and not self.settings.messages:
            return (mine[1], mine[3]) == (theirs[1], theirs[3])
        return mine == theirs

    def compare(
        self,
        name: str,
        args: list,
        kwargs: list,
        source: str,
        tally: Tally,
        made: str | None = None,
    ) -> str:
        """A module-level function's call on both (`compare_with`)."""
        text = _call_text(name, args, kwargs)

        def run(process: Process, _: int = 0) -> tuple:
            return process.call(name, args, kwargs)

        return self.compare_with(name, text, run, source, tally, made, run)

    def construct(
        self,
        cls: str,
        args: list,
        kwargs: list,
        source: str,
        tally: Tally,
        made: str | None = None,
    ) -> str:
        """A call of the module's class `cls` on both (`compare_with`)."""
        text = _call_text(cls, args, kwargs)

        def run(process: Process, _: int = 0) -> tuple:
            return process.construct(cls, args, kwargs)

        return self.compare_with(cls, text, run, source, tally, made, run)

    def compare_with(
        self,
        name: str,
        text: str,
        run: Any,
        source: str,
        tally: Tally,
        made: str | None = None,
        make: Any = None,
    ) -> str:
        """One call on both, `run(process, slot)` (slot 0 and 2: the reference, 1: the
        candidate): "agreed", "differed" or "skipped" (counted in `tally`), or "made" (not
        counted) where the call made an object in each, kept in `objects` as `made`.
        `make(process)`, where given, makes the call once more on a fresh start (a function
        called again; a method on an object made again): a difference counts only if the
        reference gives the same result `_CONFIRM` more times, so a random number that came
        out twice the same is no difference."""
        if any(fnmatch.fnmatchcase(x, p) for p in self.settings.ignore for x in (name, text)):
            tally.skipped += 1
            tally.note(f"{name}: in differential.ignore")
            return "skipped"
        # The candidate's call between the reference's two: a result that moves with the
        # clock and is the same at both ends was the same in between.
        first = run(self.reference, 0)
        handles: list[int | None] = [self.reference.last]
        mine = run(self.candidate, 1)
        handles.append(self.candidate.last)
        second = run(self.reference, 2)
        handles.append(self.reference.last)
        objects = made is not None and first[0] == mine[0] == second[0] == "opaque"
        if objects and None not in handles and first == second and self.same(mine, first):
            self.objects[str(made)] = Made(tuple(handles), text, make, [])  # type: ignore[arg-type]
            return "made"
        if first[0] == "opaque":
            tally.skipped += 1
            tally.note(f"{name}: a result crossed as a handle (no value to compare)")
            return "skipped"
        if first[0] == "missing":  # a call the log names that the reference has no name for
            tally.skipped += 1
            tally.note(f"{name}: not a public name of the reference's")
            return "skipped"
        if first == second and not self.same(mine, first) and make is not None:
            for _ in range(_CONFIRM):
                if make(self.reference) != first:
                    second = ("moved",)
                    break
        if first != second:
            tally.skipped += 1
            tally.note(f"{name}: non-deterministic (the reference gave two different results)")
            return "skipped"
        if first[0] == "died":
            tally.skipped += 1
            tally.note(f"{name}: the reference {first[1]}")
            return "skipped"
        if self.same(mine, first):
            tally.agreed += 1
            return "agreed"
        tally.differ(Difference(text, _said(first), _said(mine), source))
        return "differed"

    def on_object(
        self, key: str, name: str, args: list, kwargs: list, source: str, tally: Tally,
        made: str | None = None,
    ) -> str:  # fmt: skip
        """Method `name` of the object `key` (made by an earlier call) on both."""
        obj = self.objects[key]
        call = _call_text(name, args, kwargs)
        earlier = [_call_text(*step) for step in obj.steps]
        shown = ["...", *earlier[-4:]] if len(earlier) > 4 else earlier
        text = "; ".join([f"x = {obj.text}", *(f"x.{h}" for h in shown), f"x.{call}"])
        steps = list(obj.steps)
        obj.steps.append((name, args, kwargs))

        def run(process: Process, slot: int) -> tuple:
            return process.method(obj.handles[slot], name, args, kwargs)

        def again(process: Process) -> tuple:
            """The object made again, the calls on it made again, then this one."""
            outcome = obj.make(process)
            hid = process.last
            if outcome[0] != "opaque" or hid is None:
                return ("moved",)
            for step in steps:
                process.method(hid, *step)
            return process.method(hid, name, args, kwargs)

        make = again if obj.make is not None else None
        return self.compare_with(name, text, run, source, tally, made, make)


def check(
    run: Run,
    name: str,
    reference: str,
    observed: list[dict],
    settings: DifferentialSettings,
) -> Differential:
    """The candidate (`run.code`) against `reference`, both as the module `name`."""
    uid = privilege.sandbox_uid()
    processes: list[Process] = []
    try:
        try:
            processes.append(Process(run, reference, name, uid))
        except Dead as exc:
            return Differential(off=f"the reference {exc}", required=settings.required)
        try:
            processes.append(Process(run, run.code, name, uid))
        except Dead as exc:
            found = Difference("import", "imports", f"fails: {exc}")
            return Differential(differed=1, differences=(found,), required=settings.required)
        ref, cand = processes
        pair, tally = Pair(cand, ref, settings), Tally(differences=[], notes=[])
        observed = [e for e in observed if _well_formed(e)]
        _replay(pair, observed, name, tally)
        deadline = time.monotonic() + settings.seconds
        for fn in sorted(ref.functions):
            if time.monotonic() >= deadline:
                tally.note(f"{fn}: no generated calls (the {settings.seconds:g}s budget ran out)")
                continue
            _generate(pair, fn, observed, settings, deadline, tally)
        for cls in sorted(ref.types):
            if ref.types[cls][1].get("kind") == "plain":
                _generate_methods(pair, cls, observed, settings, deadline, tally)
        return tally.result(settings.required)
    finally:
        for process in processes:
            process.close()
        litter.after_run(run.kind, uid)


def _well_formed(entry: Any) -> bool:
    """A line of the tests' log (observe.py) of the shapes it writes: a call with its
    arguments, or which call made an object. Anything else (the log is the candidate's to
    write too) is not read."""
    if type(entry) is not dict:
        return False
    if "made" in entry:
        return type(entry["made"]) is str and type(entry.get("by")) is int
    if type(entry.get("a")) is not list or type(entry.get("k") or []) is not list:
        return False
    if type(entry.get("n", 0)) is not int:
        return False
    names = [entry.get(k) for k in ("f", "c", "o", "x", "m") if k in entry]
    return all(type(name) is str for name in names)


def _replay(pair: Pair, observed: list[dict], module: str, tally: Tally) -> None:
    """The tests' own calls in the order made: of module-level functions (each distinct one
    once), of classes (an object made) and of the methods of the objects made so."""
    made = {e.get("by"): e["made"] for e in observed if type(e.get("made")) is str}
    seen: set[str] = set()
    for entry in observed:
        args, kwargs, n = entry.get("a"), entry.get("k") or [], entry.get("n")
        key = made.get(n) if type(n) is int else None
        function, cls, obj, name = entry.get("f"), entry.get("c"), entry.get("o"), entry.get("x")
        if type(args) is not list or type(kwargs) is not list:
            continue
        if type(function) is str or type(cls) is str:
            if entry.get("m") != module:
                continue
            label = str(function if type(function) is str else cls)
        elif type(obj) is str and type(name) is str:
            label = name
        else:
            continue
        if not _plain(args) or not _plain(kwargs):
            tally.skipped += 1
            tally.note(f"{label}: an argument crossed as a handle or record")
            continue
        if type(function) is str and key is None:
            distinct = json.dumps([function, args, kwargs], sort_keys=True)
            if distinct in seen:
                continue
            seen.add(distinct)
        if type(function) is str:
            pair.compare(function, args, kwargs, "observed", tally, key)
        elif type(cls) is str:
            pair.construct(cls, args, kwargs, "observed", tally, key)
        elif obj in pair.objects:
            pair.on_object(obj, label, args, kwargs, "observed", tally, key)
        else:
            tally.skipped += 1
            tally.note(f"{label}: a method of an object no replayed call made")


# --- generated calls ----------------------------------------------------------------------------


def _generate(
    pair: Pair,
    fn: str,
    observed: list[dict],
    settings: DifferentialSettings,
    deadline: float,
    tally: Tally,
) -> None:
    """Up to `settings.examples` calls of `fn` drawn by hypothesis; the first difference is
    shrunk to a minimal input."""
    meta = pair.reference.functions[fn][1]
    drawn = _arguments(meta, [e for e in observed if e.get("f") == fn])
    if isinstance(drawn, str):
        tally.skipped += 1
        tally.note(f"{fn}: no generated calls ({drawn})")
        return

    def one(call: tuple[list, dict], probe: Tally) -> str:
        args, kwargs = _encoded(call)
        return pair.compare(fn, args, kwargs, "generated", probe)

    _hypothesize(fn, drawn, one, settings, deadline, tally)


def _generate_methods(
    pair: Pair,
    cls: str,
    observed: list[dict],
    settings: DifferentialSettings,
    deadline: float,
    tally: Tally,
) -> None:
    """For each public method of the class `cls`: up to `settings.examples` calls, each on
    an object of its own made for it (in the reference twice, in the candidate once), the
    object's arguments and the method's drawn as a function's are."""
    from hypothesis import strategies as st

    try:
        methods = pair.reference.methods(cls)
    except Dead as exc:
        tally.note(f"{cls}: no generated calls (the reference {exc})")
        return
    made = [e for e in observed if e.get("c") == cls]
    init = methods.pop("__init__", None)
    built = _arguments(init, made) if init is not None else None
    if isinstance(built, str) or (init is None and made):
        seen = [(e.get("a"), e.get("k") or []) for e in made[:200]]
        seen = [(a, k) for a, k in seen if type(a) is list and _plain(a) and _plain(k)]
        decoded = []
        for a, k in seen:
            with contextlib.suppress(Exception):
                decoded.append(([_value(x) for x in a], {str(n): _value(v) for n, v in k}))
        built = st.sampled_from(decoded) if decoded else built
    if built is None:
        built = st.just(([], {}))
    if isinstance(built, str):
        tally.skipped += 1
        tally.note(f"{cls}: no generated calls of its methods (its arguments: {built})")
        return
    keys = {e.get("by"): e.get("made") for e in observed if "made" in e}
    objects = {keys.get(e.get("n")) for e in made} - {None}
    for name, meta in sorted(methods.items()):
        if time.monotonic() >= deadline:
            tally.note(
                f"{cls}.{name}: no generated calls (the {settings.seconds:g}s budget ran out)"
            )
            continue
        calls = [e for e in observed if e.get("x") == name and e.get("o") in objects]
        drawn = _arguments(meta, calls)
        if isinstance(drawn, str):
            tally.skipped += 1
            tally.note(f"{cls}.{name}: no generated calls ({drawn})")
            continue

        def one(call: tuple, probe: Tally, name: str = name) -> str:
            (cargs, ckwargs), method_call = _encoded(call[0]), _encoded(call[1])
            outcome = pair.construct(cls, cargs, ckwargs, "generated", probe, "generated")
            if outcome == "differed":
                return outcome  # the object is made differently: the difference found
            if outcome != "made":
                return "invalid"  # the reference refused to make it: not a call to count
            try:
                return pair.on_object("generated", name, *method_call, "generated", probe)
            finally:
                del pair.objects["generated"]

        _hypothesize(f"{cls}.{name}", st.tuples(built, drawn), one, settings, deadline, tally)


def _encoded(call: tuple[list, dict]) -> tuple[list, list]:
    args = [codec.encode(a, _PLAIN_SIDE) for a in call[0]]
    kwargs = [[k, codec.encode(v, _PLAIN_SIDE)] for k, v in call[1].items()]
    return args, kwargs


def _hypothesize(
    label: str,
    drawn: Any,
    one: Any,
    settings: DifferentialSettings,
    deadline: float,
    tally: Tally,
) -> None:
    """Up to `settings.examples` calls `one(drawn value, probe tally)` drawn by hypothesis
    with the night's seed; the first difference is shrunk to a minimal input."""
    from hypothesis import HealthCheck, Phase, given, seed
    from hypothesis import settings as hsettings

    local = Tally(differences=[], notes=[])
    failing: list[Difference] = []

    class Found(Exception):
        pass

    class OutOfTime(Exception):
        pass

    def attempt(call: Any) -> None:
        if time.monotonic() >= deadline:
            raise OutOfTime
        probe = Tally(differences=[], notes=[])
        outcome = one(call, probe)
        if outcome == "differed":
            failing.append(probe.differences[0])  # type: ignore[index]
            raise Found
        if failing or outcome == "invalid":  # shrinking, or no call: not counted
            return
        if outcome == "skipped":
            local.skipped += 1
            local.note(probe.notes[0] if probe.notes else f"{label}: left out")
            return
        local.agreed += 1

    test = given(drawn)(attempt)
    test = hsettings(
        hsettings.get_profile("default"),  # whatever profile the process loaded: same calls
        max_examples=settings.examples,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
    )(test)
    test = seed(settings.seed)(test)
    try:
        test()
    except Found:
        pass
    except OutOfTime:
        local.note(f"{label}: the {settings.seconds:g}s budget ran out")
    except Exception as exc:  # hypothesis's own stops (flaky, unsatisfiable)
        if not failing:
            local.note(f"{label}: generation stopped ({type(exc).__name__})")
    if failing:
        # The last failing call hypothesis ran is its shrunk, minimal one.
        tally.differ(failing[-1])
    tally.agreed += local.agreed
    tally.skipped += local.skipped
    for text in local.notes or ():
        tally.note(text)


def _arguments(meta: dict, calls: list[dict]) -> Any:
    """A hypothesis strategy of (args, kwargs) for a function, or why there is none."""
    from hypothesis import strategies as st

    params = meta.get("params")
    if type(params) is not list:
        return "its signature could not be read"
    positional: list[Any] = []
    required: dict[str, Any] = {}
    optional: dict[str, Any] = {}
    for index, param in enumerate(params):
        if type(param) is not list or len(param) != 4:
            return "its signature could not be read"
        pname, kind, default, note = param
        if kind in (2, 4) or (kind == 0 and default is not None):
            continue  # *args, **kwargs, a positional-only default: left as they are
        seen = _seen_values(calls, index if kind in (0, 1) else None, str(pname))
        strategy = _strategy(seen, note, default)
        if strategy is None:
            if default is not None:
                continue  # its default
            return f"nothing says what parameter {pname!r} takes"
        if kind in (0, 1) and default is None and not required and not optional:
            positional.append(strategy)
        elif default is None:
            required[str(pname)] = strategy
        else:
            optional[str(pname)] = strategy
    return st.tuples(
        st.tuples(*positional).map(list),
        st.fixed_dictionaries(required, optional=optional),
    )


def _seen_values(calls: list[dict], index: int | None, name: str) -> list[Any]:
    found: list[Any] = []
    for entry in calls[:500]:
        node = None
        args = entry.get("a") or []
        if index is not None and index < len(args):
            node = args[index]
        for pair in entry.get("k") or []:
            if type(pair) is list and len(pair) == 2 and pair[0] == name:
                node = pair[1]
        if node is not None and _plain(node):
            with contextlib.suppress(Exception):
                found.append(_value(node))
    return found


_WORD = string.ascii_letters + string.digits + "._"


def _of_type(kind: type, samples: list[Any]) -> Any:
    """A strategy for values of `kind`, leaning on the `samples` seen of it."""
    from hypothesis import strategies as st

    base: Any = None
    if kind is bool:
        base = st.booleans()
    elif kind is int:
        # Small numbers often, where bounds and off-by-ones are; large ones too; and numbers
        # next to one drawn once per call, so two arguments often sit one apart (x == hi + 1).
        pivot = st.shared(st.integers(-16, 16), key="harness-differential-pivot")
        near = pivot.flatmap(lambda p: st.integers(p - 1, p + 1))
        base = st.one_of(near, st.integers(-16, 16), st.integers(-(10**6), 10**6))
    elif kind is float:
        base = st.floats(allow_nan=False, allow_infinity=False, width=64)
    elif kind is str:
        base = st.text(alphabet=_WORD, max_size=12)
    elif kind is bytes:
        base = st.binary(max_size=16)
    elif kind is type(None):
        base = st.none()
    elif kind in (list, tuple, set, frozenset):
        inner = [x for s in samples for x in s]
        element = _from_values(inner) if inner else st.integers(-100, 100)
        collection = st.lists(element, max_size=6)
        base = collection if kind is list else collection.map(kind)
    elif kind is dict:
        keys = [k for s in samples for k in s]
        values = [v for s in samples for v in s.values()]
        if keys and values:
            base = st.dictionaries(_from_values(keys), _from_values(values), max_size=5)
    if base is None:
        return None
    plain = [s for s in samples if _plain(codec.encode(s, _PLAIN_SIDE))]
    if kind is int:  # the values the tests used and their neighbours: where bounds are off
        plain = sorted({n + d for n in plain for d in (-1, 0, 1)})
    return st.one_of(st.sampled_from(plain), base) if plain else base


def _from_values(values: list[Any]) -> Any:
    from hypothesis import strategies as st

    kinds: dict[type, list[Any]] = {}
    for value in values[:500]:
        kinds.setdefault(type(value), []).append(value)
    options = [s for k, v in kinds.items() if (s := _of_type(k, v)) is not None]
    return st.one_of(*options) if options else st.nothing()


def _strategy(seen: list[Any], note: Any, default: Any) -> Any:
    from hypothesis import strategies as st

    options = []
    if seen:
        options.append(_from_values(seen))
    annotated = _annotated(note) if type(note) is str else None
    if annotated is not None:
        options.append(annotated)
    if not options and type(default) is list and _plain(default):
        with contextlib.suppress(Exception):
            value = _value(default)
            if value is not None:
                options.append(_from_values([value]))
    return st.one_of(*options) if options else None


_SIMPLE = {"int": int, "float": float, "str": str, "bool": bool, "bytes": bytes, "None": type(None)}
_SEQUENCES = re.compile(r"^(?:list|List|Sequence|Iterable|tuple|Tuple|set|Set|frozenset)\[(.*)\]$")


def _annotated(note: str) -> Any:
    """A strategy from an annotation's text (builtins, unions, sequences), or None."""
    from hypothesis import strategies as st

    text = note.strip().strip("'\"")
    if text.startswith("Optional[") and text.endswith("]"):
        inner = _annotated(text[9:-1])
        return st.one_of(st.none(), inner) if inner is not None else None
    if "|" in text:
        parts = [_annotated(p) for p in _split(text, "|")]
        return st.one_of(*parts) if parts and None not in parts else None
    if text in _SIMPLE:
        return _of_type(_SIMPLE[text], [])
    match = _SEQUENCES.match(text)
    if match:
        items = _split(match.group(1), ",")
        element = _annotated(items[0]) if items else None
        if element is None:
            return None
        shape = text.split("[", 1)[0].lower()
        if shape == "tuple" and len(items) > 1 and items[1].strip() != "...":
            parts = [_annotated(i) for i in items]
            return st.tuples(*parts) if None not in parts else None
        made = st.lists(element, max_size=6)
        return made.map({"tuple": tuple, "set": set, "frozenset": frozenset}.get(shape, list))
    if text.startswith(("dict[", "Dict[", "Mapping[")) and text.endswith("]"):
        items = _split(text.split("[", 1)[1][:-1], ",")
        if len(items) == 2:
            keys, values = _annotated(items[0]), _annotated(items[1])
            if keys is not None and values is not None:
                return st.dictionaries(keys, values, max_size=5)
    return None


def _split(text: str, sep: str) -> list[str]:
    """`text` split on `sep` outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "["
        depth -= char == "]"
        if char == sep and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()] if current.strip() else parts
