"""The recorder's vault, inside the sandbox: the one place that writes records.

A generator whose frame alone holds the record pipe, the nonce, the sequence number and each
test's observed result; every name it uses is a local bound before candidate code existed, so
no module, class or builtin the candidate rewrites reaches into it. Reaching the frame takes
gi_frame, which the audit hook refuses candidate code. A message is obeyed only from the
recorder's own hook methods, with nothing but library code on the stack; a report counts only
if it is pytest's own report type; and before each record the guard re-checks pytest, the
tests and the semantic wrappers. Imports: standard library and pytest.
"""

from __future__ import annotations

import linecache
import os
import sys
from json import encoder as json_encoder
from types import ModuleType, SimpleNamespace
from typing import Any

from _pytest.reports import CollectReport, TestReport

try:  # pytest 9's built-in subtests (unittest's subTest, the `subtests` fixture)
    from _pytest.subtests import SubtestReport
except ImportError:  # pragma: no cover - an older pytest has none
    SubtestReport = None

_OUTCOMES = ("passed", "failed", "skipped")


def open_vault(fd: int, nonce: str, parts: SimpleNamespace) -> Any:
    """Start the vault (it writes the hello record at once); returns its send().

    `parts`: own (code objects allowed to send), plugin (the Recorder), candidate (its path),
    stack, guard, semantics, describe, is_library, protected (paths purged from linecache)."""
    holder: list[Any] = []
    gen = _vault(fd, nonce, parts, _writer(fd, nonce), holder)
    holder.append(gen.send)
    next(gen)
    return gen.send


def _encoder():
    """json.dumps without the json module's Python code (which candidate code could rewrite)."""
    make, ascii_ = json_encoder.c_make_encoder, json_encoder.c_encode_basestring_ascii
    encode, join = make(None, None, ascii_, None, ":", ",", False, False, True), "".join
    return lambda record: join(encode(record, 0))


def _writer(fd: int, nonce: str):
    """emit(kind, data): one record, written whole, numbered in order."""
    write, encode, oserror, count = os.write, _encoder(), OSError, [0]

    def emit(kind: str, data: dict) -> None:
        record = {"n": nonce, "s": count[0], "k": kind, **data}
        count[0] += 1
        line = (encode(record) + "\n").encode()
        try:
            while line:
                line = line[write(fd, line) :]
        except oserror:
            pass  # a broken channel only loses records, which counts against the run

    return emit


def _vault(fd: int, nonce: str, parts: SimpleNamespace, emit: Any, holder: list):
    getframe, base, type_, str_, tuple_ = sys._getframe, BaseException, type, str, tuple
    own, clean = parts.own, parts.stack.clean
    tampered, ended, reply = [False], [False], None

    def text(value: Any) -> str:
        return value if type_(value) is str_ else ""

    def tamper(reason: Any) -> None:
        if not tampered[0]:
            tampered[0] = True
            emit("tamper", {"reason": text(reason)[:300]})

    handlers = _handlers(parts, emit, tamper, text, holder)
    sub_type, len_ = SubtestReport, len

    def subtest(message: tuple) -> bool:
        """A subtest's report is logged while its test's body runs (test frames on the
        stack). It can only fail its test (score.py), never pass one, so who asks for it
        does not matter: taken from the recorder's hook whatever the stack."""
        if sub_type is None or message[0] != "phase" or len_(message) < 2:
            return False
        return type_(message[1]) is sub_type

    emit("hello", {"pid": os.getpid()})
    while True:
        try:
            message = yield reply
            if type_(message) is not tuple_ or not message or type_(message[0]) is not str_:
                continue
            if message[0] == "tamper":  # a semantic check or a refusal, from anywhere
                tamper(message[1])
                continue
            caller = getframe(1)
            if caller.f_code not in own or not (clean(caller) or subtest(message)):
                tamper(f"a {message[0]!r} record was asked for from outside pytest's machinery")
            elif not ended[0] and message[0] in handlers:
                ended[0] = message[0] == "end"
                handlers[message[0]](*message[1:])
            del caller
        except base as exc:  # never die: a dead vault writes no more records
            try:  # noqa: SIM105  (contextlib is the candidate's to rewrite)
                tamper(f"the recorder failed: {type_(exc).__name__}")
            except base:
                pass


def _handlers(parts: SimpleNamespace, emit: Any, tamper: Any, text: Any, holder: list) -> dict:
    """One closure per message; all of them run inside the vault's frame."""
    check, watch, impostor, wrap, wrapped_intact = (
        parts.guard.check,
        parts.guard.watch,
        parts.guard.impostor,
        parts.semantics.wrap,
        parts.semantics.intact,
    )
    protected, max_text = frozenset(parts.protected), 20_000
    sub_type = SubtestReport
    report_type, collect_type, type_, float_, round_, vars_ = (
        TestReport,
        CollectReport,
        type,
        float,
        round,
        vars,
    )
    list_, dict_, module_type, modules, lines = (
        list,
        dict,
        ModuleType,
        sys.modules,
        vars(linecache),
    )
    outcomes, candidate, plugin, raw = _OUTCOMES, parts.candidate, parts.plugin, {}
    getattr_, id_ = getattr, id

    def words(message: Any, details: Any) -> tuple[str, str]:
        return text(message)[:500], text(details)[:max_text]

    def purge() -> None:
        """Test sources pytest read into linecache (to show a failure) are not for candidates."""
        cache = lines.get("cache")
        for name in list_(cache) if type_(cache) is dict_ else ():
            if name in protected:
                cache.pop(name, None)

    def collectreport(report: Any, message: Any, details: Any) -> None:
        if type_(report) is not collect_type:
            return tamper("a collect report of a foreign type reached the recorder")
        if report.outcome == "failed":
            msg, details = words(message, details)
            emit("collect_error", {"id": text(report.nodeid), "msg": msg, "details": details})
        purge()

    def candidate_namespaces(items: list) -> list[dict]:
        tests = {id_(m): vars_(m) for m in (getattr_(i, "module", None) for i in items) if m}
        mine = [
            vars_(m)
            for m in list_(modules.values())
            if type_(m) is module_type and vars_(m).get("__file__") == candidate
        ]
        return [*tests.values(), *mine]

    def collected(config: Any, items: list, ids: list) -> None:
        reason = check() or impostor(items)  # a test module swapped while it was imported
        if reason:
            tamper(reason)
        wrap(candidate_namespaces(items), holder[0])
        watch(config.pluginmanager, items, plugin)
        selected = [text(i.nodeid) for i in items]
        emit("collected", {"ids": [text(i) for i in ids], "selected": selected})
        purge()

    def phase(report: Any, message: Any, details: Any) -> None:
        if sub_type is not None and type_(report) is sub_type:
            return subtest(report, message, details)
        if type_(report) is not report_type:
            return tamper("a test report of a foreign type reached the recorder")
        reason = check(report.nodeid) or wrapped_intact()
        if reason:
            tamper(reason)
        outcome, when, nodeid = text(report.outcome), text(report.when), text(report.nodeid)
        msg, details = words(message, details) if outcome != "passed" else ("", "")
        duration = report.duration if type_(report.duration) is float_ else 0.0
        emit(
            "phase",
            {
                "id": nodeid,
                "when": when,
                "outcome": outcome if outcome in outcomes else "failed",
                "raw": raw.get(nodeid, "none") if when == "call" else "",
                "msg": msg,
                "details": details,
                "dur": round_(duration, 4),
                "uncarried": ("harness_uncarried", True) in list_(report.user_properties),
            },
        )

    def subtest(report: Any, message: Any, details: Any) -> None:
        """A subtest's result: a failed one fails its test, as plain pytest's report says."""
        reason = check(report.nodeid) or wrapped_intact()
        if reason:
            tamper(reason)
        outcome = text(report.outcome)
        msg, details = words(message, details) if outcome == "failed" else ("", "")
        emit("subtest", {"id": text(report.nodeid), "failed": outcome == "failed", "msg": msg,
                         "details": details})  # fmt: skip

    def end(status: Any) -> None:
        """After pytest.main: pytest has undone its own patches; every record is out already,
        so nothing done now can change one."""
        emit("end", {"status": text(status)[:500]})

    return {
        "session": parts.guard.rebase,
        "collectreport": collectreport,
        "collected": collected,
        "start": lambda nodeid: emit("start", {"id": text(nodeid)}),
        "body": lambda nodeid, state: raw.__setitem__(text(nodeid), text(state)),
        "phase": phase,
        "finish": lambda nodeid: (emit("finish", {"id": text(nodeid)}), purge()),
        "end": end,
    }
